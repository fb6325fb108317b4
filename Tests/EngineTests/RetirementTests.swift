@testable import Enforcement
import Foundation
@testable import Helper
@testable import LowPriority
import ScrollOffCore
import Synchronization
import Testing

/// `Retirement`: what the engine replaces is freed on the releaser thread once no one else holds
/// it, never by the caller nor by a query in flight that drops it last (SPEC §9: a publish mid-query
/// had the event loop free a 30 MB matcher).
@Suite struct RetirementTests {
    /// Where each probe's deinit ran.
    final class Record: Sendable {
        let frees = Mutex<[Bool]>([])
        var onReleaser: [Bool] { frees.withLock { $0 } }
    }

    /// An object whose deinit says which thread freed it.
    final class Probe {
        let record: Record
        init(_ record: Record) { self.record = record }
        deinit { record.frees.withLock { $0.append(Retirement.isReleaserThread) } }
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    @Test func an_object_a_query_still_holds_is_freed_after_that_reference_goes_on_the_releaser_thread() {
        let retirement = Retirement()
        let record = Record()
        var inFlight: Probe? = Probe(record)
        retirement.retire(inFlight!)
        // Several polls pass while the "query" holds it: nothing is freed.
        usleep(60_000)
        #expect(record.onReleaser.isEmpty)
        #expect(retirement.isWaiting(inFlight!))
        // The query ends: its drop is not the last one, so the query's thread frees nothing.
        inFlight = nil
        #expect(Self.eventually { !record.onReleaser.isEmpty })
        #expect(record.onReleaser == [true], "freed once, on the releaser thread")
    }

    @Test func an_object_retired_twice_is_freed_once_without_waiting_for_its_patience() {
        let retirement = Retirement(patience: .seconds(60))
        let record = Record()
        var probe: Probe? = Probe(record)
        retirement.retire(probe!)
        retirement.retire(probe!)
        probe = nil
        // Two waiting references would hold each other until the patience ran out.
        #expect(Self.eventually(2) { !record.onReleaser.isEmpty })
        #expect(record.onReleaser == [true])
    }

    @Test func an_object_still_held_past_the_patience_is_let_go_and_freed_by_its_holder() {
        let retirement = Retirement(patience: .milliseconds(30))
        let record = Record()
        var holder: Probe? = Probe(record)
        retirement.retire(holder!)
        #expect(Self.eventually { !retirement.isWaiting(holder!) })
        #expect(record.onReleaser.isEmpty)
        holder = nil
        #expect(record.onReleaser == [false], "the holder's drop was the last, here")
    }

    @Test func past_its_capacity_the_caller_drops_in_place_as_before() {
        let retirement = Retirement(capacity: 1)
        let record = Record()
        let first = Probe(record)
        retirement.retire(first)
        var second: Probe? = Probe(record)
        retirement.retire(second!)
        #expect(!retirement.isWaiting(second!))
        second = nil
        #expect(record.onReleaser == [false])
        withExtendedLifetime(first) {}
    }

    @Test func a_publish_hands_the_enforcement_replaced_to_the_releaser_which_frees_it_once_the_query_ends() async throws {
        let time = TestTimeSource(wall: Fixture.noon, bootNanoseconds: 1_000_000_000_000_000_000)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        var inFlight: Enforcement? = engine.box.enforcement
        weak let replaced = inFlight
        _ = try await engine.block(["instagram"], reason: "less scrolling")
        #expect(engine.box.enforcement !== inFlight)
        #expect(Retirement.shared.isWaiting(inFlight!), "the publish retired it rather than dropping it")
        inFlight = nil
        #expect(Self.eventually { replaced == nil })
    }
}
