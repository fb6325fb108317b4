import Foundation
import GRDB
import ScrollOffCore
@testable import Store
import Testing

/// SPEC §4a, §5a in the store: the v4 step copies the ledger and the batches into tables that allow
/// `allowance` (ids, rows and the ledger's sequence kept), and pauses, allowances and allowance
/// batches round-trip.
@Suite struct AllowanceStoreTests {
    @Test func a_database_before_v4_keeps_its_ledger_and_batches_and_accepts_allowance_rows() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.stateDirectory, withIntermediateDirectories: true)
        do {
            let old = try DatabaseQueue(path: dir.databasePath)
            try Schema.migrator.migrate(old, upTo: "v-insights-1 hour and entry rollups, insight marks")
            try old.write { db in
                try db.execute(sql: "INSERT INTO profiles (name, time_zone, preset) VALUES ('kids', 'UTC', 'strict')")
                try db.execute(sql: "INSERT INTO ledger (profile, time, delta_seconds, reason) VALUES ('kids', 1, 120, 'starter'), ('kids', 2, 300, 'earn')")
                try db.execute(sql: "DELETE FROM ledger WHERE id = 2")
                try db.execute(sql: """
                    INSERT INTO wallet_batches (profile, position, origin, earned_day, created_at, expires_at, remaining, earmark)
                    VALUES ('kids', 0, 'starter', NULL, 1, NULL, 120, NULL)
                    """)
            }
        }
        let store = try Store(directory: dir.stateDirectory)
        let rows = try store.read { db in try Row.fetchAll(db, sql: "SELECT id, reason FROM ledger ORDER BY id") }
        #expect(rows.map { $0["id"] as Int64 } == [1])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM wallet_batches") } == 1)
        // The sequence is kept: a deleted id is never handed out again.
        let t = Instant(millisecondsSince1970: 10_000)
        let receipt = try store.commit(StateChange([.appendLedger(profile: "kids", LedgerRow(time: t, deltaSeconds: 600, reason: .allowance, note: "test"))]),
                                       anchor: Fixture.anchor(t))
        #expect(receipt.ledgerIDs == [3])
    }

    @Test func pauses_allowances_and_allowance_batches_round_trip() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Store(directory: dir.stateDirectory)
        let t = Fixture.start
        let day = LocalCalendar(identifier: "UTC")!.day(of: t)
        let pause = Pause(start: t, end: t + .minutes(45), reason: "dinner", by: "root (uid 0)")
        let allowance = Allowance(entries: ["youtube", "tiktok"], secondsByWeekday: [7200, 3600, 3600, 3600, 3600, 3600, 7200], cooldownUntil: t + .hours(2))
        var wallet = WalletState(asOf: t)
        wallet.batches = [CreditBatch(origin: .allowance(day), createdAt: t, expiresAt: t + .hours(3), remaining: 600, allowanceKey: allowance.key)]
        wallet.allowanceDay = day
        wallet.allowanceGranted = [allowance.key: 3600]
        _ = try store.commit(StateChange([
            .saveProfile(Fixture.settings("kids")),
            .savePause(profile: "kids", pause),
            .saveAllowance(profile: "kids", allowance),
            .saveAccount(profile: "kids", CreditAccountState(wallet: wallet)),
        ]), anchor: Fixture.anchor(t))
        let kids = try #require(try store.load().profile(named: "kids"))
        #expect(kids.pause == pause)
        #expect(kids.allowances == [allowance])
        #expect(kids.account?.wallet.batches == wallet.batches)
        #expect(kids.account?.wallet.allowanceDay == day)
        #expect(kids.account?.wallet.allowanceGranted == [allowance.key: 3600])
        _ = try store.commit(StateChange([.removePause(profile: "kids"), .removeAllowance(profile: "kids", entries: ["tiktok", "youtube"])]), anchor: Fixture.anchor(t))
        let after = try #require(try store.load().profile(named: "kids"))
        #expect(after.pause == nil)
        #expect(after.allowances.isEmpty)
    }
}
