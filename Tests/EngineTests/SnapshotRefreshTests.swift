import ControlAPI
@testable import Helper
import ScrollOffCore
import Testing

/// A snapshot knows its answers for 48 h; the engine republishes long before that, and a query that
/// finds the refresh overdue (a suspended machine, a stuck timer) wakes the engine once.
@Suite struct SnapshotRefreshTests {
    @Test func the_first_query_past_the_refresh_claims_the_wake_and_later_ones_do_not() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let enforcement = engine.box.enforcement
        #expect(enforcement.snapshot.refreshAt == Fixture.noon + .hours(24))
        #expect(!enforcement.claimRebuild(at: Fixture.noon + .hours(23)))
        #expect(enforcement.claimRebuild(at: Fixture.noon + .hours(25)))
        #expect(!enforcement.claimRebuild(at: Fixture.noon + .hours(25)))
    }

    @Test func past_the_horizon_a_scheduled_name_fails_closed_until_the_woken_engine_republishes() async throws {
        let time = TestTimeSource(wall: Fixture.noon, followsRealTime: true)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        let loop = Task { try await engine.run() }
        defer { loop.cancel() }
        _ = try await engine.addSchedule(ScheduleRequest(name: "morning", from: "09:00", to: "10:00", entries: ["youtube"]))
        let first = engine.box.enforcement
        #expect(await engine.decision("www.youtube.com").blocked == false)
        // 49 h later (13:00 two days on, outside the window) the timer has not run: the snapshot no
        // longer knows, so the managed name is blocked rather than guessed open.
        time.pass(.hours(49))
        #expect(await engine.decision("www.youtube.com").blocked)
        #expect(await engine.decision("www.example.com").blocked == false, "unmanaged names are not failed closed")
        engine.wakeForRebuild()
        var republished = false
        for _ in 0..<100 where !republished {
            try await Task.sleep(for: .milliseconds(20))
            republished = engine.box.enforcement !== first
        }
        #expect(republished)
        #expect(engine.box.enforcement.snapshot.builtAt >= Fixture.noon + .hours(49))
        #expect(await engine.decision("www.youtube.com").blocked == false)
    }
}
