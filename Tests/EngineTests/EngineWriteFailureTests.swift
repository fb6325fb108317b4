import ControlAPI
@testable import Engine
@testable import Helper
import ControlServer
import ScrollOffCore
@testable import Store
import Testing

/// While state writes fail (a full disk), what time changed in the wallets is enforced from memory
/// (SPEC §3 "Enforcement at every instant"). Every publish must carry it, not only the timer's:
/// a list refresh or a reload republishing the last committed state would undo it.
@Suite struct EngineWriteFailureTests {
    @Test func a_spend_cut_short_by_midnight_expiry_stays_blocked_when_a_reload_republishes_during_failing_writes() async throws {
        // 22:00 UTC (the profile's zone): block, earn 5 min by 23:00 (strict preset: expires at midnight).
        let time = TestTimeSource(wall: Fixture.noon + .hours(10))
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        time.pass(.hours(1))
        try await engine.tick()
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 420)

        // 23:58: a spend of everything (7 min, until 00:05). The earned credit goes first; what is left
        // of it expires at 00:00, so the spend runs on the 2 min of starter credit until 00:02.
        time.pass(.minutes(58))
        let grant = try await engine.use("instagram").grant
        #expect(grant.end == Fixture.noon + .hours(12) + .minutes(5))
        #expect(await engine.decision("www.instagram.com").blocked == false)

        try await engine.failStateWrites()
        time.pass(.minutes(4) + .seconds(1))
        await #expect(throws: EngineError.self) { try await engine.tick() }
        #expect(await engine.decision("www.instagram.com").blocked, "the expiry cut the spend to 00:02")

        // A reload or a list update republishes: the spend must stay closed.
        await engine.setExtraAllowedHosts(["lists.example.org"])
        #expect(await engine.decision("www.instagram.com").blocked, "a republish during failing writes reopened the spend")
        #expect(try await StatusReport(engine.status()).entries.first { $0.id == "instagram" }?.state == "blocked")

        // Writes succeed again: the books catch up, charged once (4 min of spend, 3 min expired).
        try await engine.restoreStateWrites()
        try await engine.tick()
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 0)
        #expect(await engine.decision("www.instagram.com").blocked)
    }
}

extension HelperEngine {
    /// Makes every commit fail, as a full disk does: each commit writes the clock anchor.
    func failStateWrites() throws {
        try sqliteStore.queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER fail_anchor_insert BEFORE INSERT ON clock_anchor BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
                CREATE TEMP TRIGGER fail_anchor_update BEFORE UPDATE ON clock_anchor BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
                """)
        }
    }

    func restoreStateWrites() throws {
        try sqliteStore.queue.writeWithoutTransaction { db in
            try db.execute(sql: "DROP TRIGGER fail_anchor_insert; DROP TRIGGER fail_anchor_update;")
        }
    }
}
