@testable import Engine
import Foundation
import PostgresStore
import ScrollOffCore
import Store
import Synchronization
import TestSupport
import Testing

/// The shared store's faults that the engine tests can stage in one process: a database that stops
/// answering (its processes stopped: connections are accepted and never answered, as behind a
/// silently dropped route) and two helpers whose clocks differ.
@Suite(.serialized) struct SharedStoreFaultTests {
    /// The listener's version check and its reconnections have deadlines: a server that stops
    /// answering is noticed within a few seconds (not after TCP's 15 minutes), and once it answers
    /// again the node reports it within a second. A write asked meanwhile is refused at its deadline.
    @Test func a_database_that_stops_answering_is_noticed_and_its_return_reported_within_a_second() async throws {
        let db = try TestPostgres()
        var stopped: [pid_t] = []
        defer { db.stop() }
        // Runs first: a stopped server would not stop for pg_ctl.
        defer { for pid in stopped { kill(pid, SIGCONT) } }
        let store = try PostgresStateStore(location: db.location, node: "a", statementTimeout: .seconds(2))
        _ = try store.load()
        let reconnections = Moments()
        let listener = PostgresListener(store: store, pollInterval: .milliseconds(200))
        let task = Task {
            await listener.run { reason in
                if case .reconnected = reason { reconnections.times.withLock { $0.append(.now) } }
            }
        }
        defer { task.cancel() }
        try await Task.sleep(for: .milliseconds(500)) // connected and checking
        let failuresBefore = store.counters.failures

        stopped = db.processes()
        #expect(stopped.count >= 2, "the postmaster and its children")
        for pid in stopped { kill(pid, SIGSTOP) }
        // The version check runs into its deadline and the listener counts the loss.
        #expect(await SharedFixture.eventually(seconds: 6) { store.counters.failures > failuresBefore },
                "the listener did not notice a server that stopped answering")
        // A write meanwhile is refused at once (the listener has found the server away), naming it.
        let anchor = ClockAnchor(trusted: Instant(millisecondsSince1970: 1_795_003_200_000), bootNanoseconds: 1, bootID: "x")
        let asked = ContinuousClock.now
        do {
            try store.commit(StateChange([.saveProfile(ProfileSettings(name: "default", timeZoneID: "UTC"))]), anchor: anchor)
            Issue.record("a commit went through with the server stopped")
        } catch {
            #expect("\(error)".contains("cannot be reached (lost"), "\(error)")
        }
        #expect(ContinuousClock.now - asked < .seconds(1))

        for pid in stopped { kill(pid, SIGCONT) }
        stopped = []
        let resumed = ContinuousClock.now
        #expect(await SharedFixture.eventually(seconds: 5) { !reconnections.times.withLock { $0.isEmpty } },
                "the listener never reported the server back")
        if let back = reconnections.times.withLock({ $0.first }) {
            #expect(back - resumed < .seconds(1), "reported back \(back - resumed) after the server answered again")
        }
        #expect(!store.isAway)
        // And the write path is whole again.
        _ = try store.load()
        try store.commit(StateChange([.saveProfile(ProfileSettings(name: "default", timeZoneID: "UTC"))]), anchor: anchor)
        #expect(try store.rowCount("profiles") == 1)
    }

    /// Two helpers whose machines' clocks are 2 hours apart run the rules on one time base, the
    /// database server's: their trusted clocks agree, a spend opened on the fast one and ended on
    /// the other is charged the seconds that really passed, and the fast one is named by `doctor`.
    @Test func helpers_whose_clocks_differ_by_two_hours_run_the_rules_on_the_database_clock() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let storeA = try PostgresStateStore(location: db.location, node: "a", statementTimeout: .seconds(2))
        let storeB = try PostgresStateStore(location: db.location, node: "b", statementTimeout: .seconds(2))
        let clockA = try HouseholdTimeSource(local: MachineClock(ahead: .zero), store: storeA)
        let clockB = try HouseholdTimeSource(local: MachineClock(ahead: .hours(2)), store: storeB)
        #expect(abs(clockA.offsetMilliseconds) < 1000)
        #expect(abs(clockB.offsetMilliseconds - 7_200_000) < 1000, "\(clockB.offsetMilliseconds)")
        let a = try await HelperEngine.start(configuration: SharedFixture.configuration(), store: storeA, timeSource: clockA)
        let b = try await HelperEngine.start(configuration: SharedFixture.configuration(), store: storeB, timeSource: clockB)

        let server = Instant(millisecondsSince1970: try #require(Int64(try db.query("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint"))))
        let nowA = await a.trustedNow(), nowB = await b.trustedNow()
        #expect(abs((nowB - nowA).milliseconds) < 1000, "A at \(nowA), B at \(nowB)")
        #expect(abs((nowB - server).milliseconds) < 2000, "B at \(nowB), the server at \(server)")

        _ = try await a.block(["instagram"])
        _ = await b.reloadFromStore()
        _ = try await b.use("instagram", for: .minutes(5))
        try await Task.sleep(for: .milliseconds(1500))
        _ = await a.reloadFromStore()
        _ = try await a.stop()
        let spent = try db.spentSeconds(storeA)
        #expect((1...3).contains(spent), "charged \(spent) s for a spend of about 1.5 s")
        #expect(try SharedFixture.invariantProblems(storeA).isEmpty)

        let problems = try storeA.integrityCheck().problems
        #expect(problems.contains { $0.contains("helper b's clock is") && $0.contains("ahead of the database server's") }, "\(problems)")
        #expect(!problems.contains { $0.contains("helper a's clock") }, "\(problems)")
    }
}

/// Instants a listener reported, read by the test.
final class Moments: Sendable {
    let times = Mutex<[ContinuousClock.Instant]>([])
}

/// This machine's clocks as `SystemTimeSource` reads them, with the wall clock `ahead` of the real
/// one (a machine whose NTP failed, or set by hand).
struct MachineClock: TimeSource {
    let ahead: Span

    func read() -> ClockReading {
        ClockReading(wall: Instant(millisecondsSince1970: Self.nanoseconds(CLOCK_REALTIME) / 1_000_000) + ahead,
                     monotonicNanoseconds: UInt64(Self.nanoseconds(CLOCK_MONOTONIC)), bootNanoseconds: UInt64(Self.nanoseconds(CLOCK_BOOTTIME)),
                     bootID: "shared-store-fault-tests")
    }

    private static func nanoseconds(_ clock: clockid_t) -> Int64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
