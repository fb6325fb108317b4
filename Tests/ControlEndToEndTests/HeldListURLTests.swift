import ControlAPI
import ControlServer
import Engine
import Foundation
import Helper
import ListFetch
import Logging
import ScrollOffCore
import ServiceKit
import Testing

/// A configuration file URL for a list a rule holds (SPEC §3, §11) waits for the lock's end, then
/// applies by itself through the refresh timer: with a hand-moved clock, and a guard standing in
/// for a cooldown that ends at a known instant (the engine's real cooldowns last hours).
extension ControlEndToEnd {
@Suite
struct HeldListURLTests {
    let start = Instant(millisecondsSince1970: 1_800_000_000_000)

    @Test func a_held_back_url_applies_when_the_lock_ends_and_not_before() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let timer = ManualTimer(now: start)
        let lists = ListsController(
            stateDirectory: directory, configuration: ListsConfiguration(refreshPlan: RefreshPlan(period: .hours(6), jitterWindow: .minutes(10))),
            clock: { timer.now() }, logger: Logger(label: "test"))
        let oldFile = directory + "/old.txt", newFile = directory + "/new.txt"
        try writeList(oldFile, names: 3)
        try writeList(newFile, names: 7)
        _ = try await lists.add(AddListRequest(url: "file://" + oldFile, name: "kids"))
        let name = try ListName("kids")

        let lockEnd = start + .hours(1)
        await lists.setGuard(ListGuard(
            checkRemoval: { _ throws(ControlFailure) in
                guard timer.now() < lockEnd else { return }
                var refusal = ControlFailure.invalidArgument("kids is in cooldown.")
                refusal.error.opensAt = lockEnd.date
                throw refusal
            },
            checkSourceHost: { _ throws(ControlFailure) in }))
        let outcome = await lists.setConfiguredSources(
            [ConfiguredListSource(name: "kids", url: "file://" + newFile)], refreshPeriod: .hours(6), definedIn: "scrolloff.toml")
        #expect(outcome.heldBack.count == 1)
        #expect(outcome.heldBack.first?.contains("lists.source[1].url \"file://\(newFile)\" waits until 2027-01-15T09:00:00Z") == true,
                "\(outcome.heldBack)")

        let service = ListRefreshService(lists: lists, timer: timer, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        #expect(await eventually { timer.pendingDeadlines == [lockEnd] }, "wakes at the lock's end, saw \(timer.pendingDeadlines)")

        timer.advance(to: lockEnd - Span(milliseconds: 1))
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await lists.store.metadata(for: name)?.url == "file://" + oldFile, "nothing swaps 1 ms early")
        #expect(try await lists.store.metadata(for: name)?.entryCount == 3)

        timer.advance(to: lockEnd)
        #expect(await eventually {
            let meta = try? await lists.store.metadata(for: name)
            return meta?.url == "file://" + newFile && meta?.entryCount == 7
        })
    }
}
}
