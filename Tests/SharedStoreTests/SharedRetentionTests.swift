import Foundation
@testable import PostgresStore
import ScrollOffCore
@testable import Store
import TestSupport
import Testing

/// SPEC §12 retention on the household's PostgreSQL: the same roll-up as on SQLite, done by one
/// helper at a time whichever runs it (an advisory lock), with the household page's stale
/// sessions and sign-in tries taken away too.
@Suite(.serialized) struct SharedRetentionTests {
    static let now = Instant(millisecondsSince1970: 1_795_003_200_000) // Wednesday 2026-11-18 12:00 UTC
    static let profile = "default"

    /// Five old days (100 to 96 days ago) and one recent day of ledger rows, urges (one followed
    /// by a peek within 5 minutes), an ended grant, a machine-wide event and an answered request.
    static func history(_ store: PostgresStateStore) throws {
        _ = try store.load()
        let anchor = ClockAnchor(trusted: now, bootNanoseconds: 1, bootID: "x")
        var ops: [StateChange.Operation] = [.saveProfile(ProfileSettings(name: profile, timeZoneID: "UTC"))]
        for day in 0..<5 {
            let t = now - .hours(24 * (100 - Int64(day)))
            ops.append(.appendLedger(profile: profile, LedgerRow(time: t, deltaSeconds: 120, reason: .earn)))
            ops.append(.appendEvent(StoredEvent(profile: profile, time: t, kind: .urge, entry: "instagram", clientIP: "10.0.0.2")))
        }
        let peek = now - .hours(24 * 98) + .minutes(2)
        ops.append(.saveGrant(profile: profile, Grant(id: 1, entry: "instagram", kind: .peek, start: peek, end: peek + .minutes(2)),
                              ended: StateChange.GrantEnd(at: peek + .minutes(2), reason: "expired")))
        ops.append(.appendEvent(StoredEvent(profile: nil, time: now - .hours(24 * 99), kind: .tamper)))
        let recent = now - .hours(24 * 10)
        ops.append(.appendLedger(profile: profile, LedgerRow(time: recent, deltaSeconds: -60, reason: .spend, entry: "reddit")))
        ops.append(.appendEvent(StoredEvent(profile: profile, time: recent, kind: .urge, entry: "reddit", clientIP: "10.0.0.2")))
        try store.commit(StateChange(ops), anchor: anchor)
    }

    @Test func retention_rolls_old_rows_up_once_by_the_one_helper_holding_the_lock_and_totals_stay() throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let a = try PostgresStateStore(location: db.location, node: "a")
        let b = try PostgresStateStore(location: db.location, node: "b")
        try Self.history(a)
        let daysBefore = try a.dailyTotals(profile: Self.profile)
        let sumsBefore = try a.verifyLedger().map(\.ledgerSumSeconds)
        #expect(daysBefore.count == 6 && daysBefore.map(\.urges).reduce(0, +) == 6)
        #expect(try a.rowCount("ledger") == 6 && a.rowCount("events") == 7 && a.rowCount("grants") == 1)

        // While one helper runs it (A holds the lock in its transaction), the other leaves it to
        // A: B returns at once with nothing done, and every row is still there.
        try a.session.run { s in
            try s.transaction {
                try s.execute("SELECT pg_advisory_xact_lock($1)", [.int(PostgresStateStore.retentionLock)])
                let started = ContinuousClock.now
                let skipped = try b.applyRetention(now: Self.now, days: 90)
                #expect(skipped == RetentionReport())
                #expect(ContinuousClock.now - started < .seconds(2), "B waited for the lock instead of leaving the work to its holder")
                #expect(try b.rowCount("ledger") == 6 && b.rowCount("events") == 7)
            }
        }

        let report = try b.applyRetention(now: Self.now, days: 90)
        #expect(report.daysRolledUp == 5 && report.ledgerRowsDeleted == 5 && report.grantsDeleted == 1, "\(report)")
        #expect(report.eventsDeleted == 6, "five old urges and the machine-wide event: \(report)")
        #expect(try a.rowCount("ledger") == 1 && a.rowCount("events") == 1 && a.rowCount("grants") == 0)
        // Every day's figures (urges, resisted, open time, hours, entries) and the books survive.
        #expect(try a.dailyTotals(profile: Self.profile) == daysBefore)
        #expect(try a.verifyLedger().map(\.ledgerSumSeconds) == sumsBefore)

        // A, running it next, finds nothing more: a day is never rolled twice.
        #expect(try a.applyRetention(now: Self.now, days: 90) == RetentionReport())
        #expect(try b.dailyTotals(profile: Self.profile) == daysBefore)
    }

    @Test func retention_takes_away_page_sessions_and_sign_in_tries_left_a_day_and_keeps_the_rest() throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let a = try PostgresStateStore(location: db.location, node: "a")
        try Self.history(a)
        let idle: Int64 = 12 * 3_600_000
        for id in ["stale", "fresh"] {
            try a.insertWebSession(WebSessionRecord(id: id, csrf: "c-\(id)"), replacing: nil, idleMilliseconds: idle, maximumCount: 10)
        }
        for name in ["stale-name", "fresh-name"] {
            _ = try a.updateSignInTries(name: name, forgetAfterMilliseconds: 3_600_000, maximumTracked: 10) { tries, now in
                tries = SignInTries(tries: 1, nextAt: now, lastAt: now, owner: false)
            }
        }
        try a.session.run { s in
            try s.execute("UPDATE web_sessions SET last_seen = last_seen - 2 * 86400000 WHERE id = 'stale'")
            try s.execute("UPDATE web_sign_in_tries SET last_at = last_at - 2 * 86400000 WHERE name = 'stale-name'")
        }
        try a.applyRetention(now: Self.now, days: 90)
        let sessions = try a.session.run { s in try s.rows("SELECT id FROM web_sessions ORDER BY id").map { try $0.text("id") } }
        let names = try a.session.run { s in try s.rows("SELECT name FROM web_sign_in_tries ORDER BY name").map { try $0.text("name") } }
        #expect(sessions == ["fresh"] && names == ["fresh-name"])
    }
}
