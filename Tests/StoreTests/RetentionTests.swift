import Foundation
import GRDB
import ScrollOffCore
import Testing
@testable import Store

@Suite struct RetentionTests {
    /// Four months of a strict-preset life: earning every day, a peek, sometimes a spend, a token,
    /// urges (some followed by a peek within 5 min) and protected time, all committed as the helper would.
    static func fourMonths(in store: Store) throws -> (account: CreditAccount, end: Instant) {
        let policy = Fixture.policy(.strict)
        var a = CreditAccount(state: CreditAccountState(asOf: Fixture.start), policy: policy)
        var t = Fixture.start
        try Fixture.apply(store, &a, at: t) { $0.grantStarter(at: t) }
        for day in 0..<120 {
            t = t + .hours(3)
            try Fixture.apply(store, &a, at: t) { $0.advance(to: t, blockInForce: true) }
            var urges = StateChange([
                .appendEvent(StoredEvent(profile: Fixture.profile, time: t, kind: .urge, entry: "instagram", clientIP: "10.0.0.2")),
                .appendEvent(StoredEvent(profile: Fixture.profile, time: t + .minutes(30), kind: .urge, entry: "tiktok", clientIP: "10.0.0.2")),
                .addProtectedTime(profile: Fixture.profile, from: t - .hours(3), to: t),
            ])
            if day % 10 == 0 { urges.append(.appendEvent(StoredEvent(profile: nil, time: t, kind: .tamper))) }
            try store.commit(urges, anchor: Fixture.anchor(t))
            t = t + .minutes(2)
            try Fixture.apply(store, &a, at: t) { try $0.peek("instagram", task: "check", at: t) } // follows the urge: not resisted
            if day % 3 == 0 {
                t = t + .hours(1) + .seconds(1)
                try Fixture.apply(store, &a, at: t) { $0.advance(to: t, blockInForce: true) }
                if a.wallet.balanceSeconds > 30 {
                    try Fixture.apply(store, &a, at: t) { try $0.use("reddit", for: .seconds(30), at: t) }
                }
            }
            if day % 45 == 0 {
                let focus = try FocusSession(id: Int64(day), entries: ["youtube"], startingAt: t, length: .minutes(45))
                try store.commit(StateChange([.addPlan(profile: Fixture.profile, when: "day \(day)", then: "walk", created: t),
                                              .saveFocusSession(profile: Fixture.profile, focus)]),
                                 anchor: Fixture.anchor(t))
            }
            t = Fixture.calendar.nextMidnight(after: t) + .hours(7)
        }
        return (a, t)
    }

    @Test func rows_older_than_90_days_roll_into_daily_rollups_and_lifetime_totals_are_kept() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir, preset: .strict)
        let (_, now) = try Self.fourMonths(in: store)
        let totalsBefore = try store.lifetimeTotals(profile: Fixture.profile)
        let daysBefore = try store.dailyTotals(profile: Fixture.profile)
        let ledgerBefore = try store.ledger(profile: Fixture.profile)
        let plansBefore = try store.load().plans
        #expect(totalsBefore.urges == 240 && totalsBefore.resisted == 120)
        #expect(totalsBefore.peeks == 120 && totalsBefore.earnedSeconds > 0 && totalsBefore.spentSeconds > 0)
        #expect(totalsBefore.protectedSeconds == 120 * 3 * 3600)

        let report = try store.applyRetention(now: now)

        let calendar = Fixture.calendar
        let cutoff = calendar.startOfDay(calendar.day(of: now - .hours(24 * 90)))
        let ledgerAfter = try store.ledger(profile: Fixture.profile)
        #expect(ledgerAfter.allSatisfy { $0.row.time >= cutoff })
        #expect(ledgerAfter.map(\.id) == ledgerBefore.filter { $0.row.time >= cutoff }.map(\.id))
        #expect(report.ledgerRowsDeleted == ledgerBefore.count - ledgerAfter.count && report.ledgerRowsDeleted > 0)
        #expect(try store.events().allSatisfy { $0.time >= cutoff || ($0.profile == nil && $0.time >= now - .hours(24 * 90)) })
        #expect(report.eventsDeleted > 0 && report.daysRolledUp >= 25)

        // Lifetime totals, every day's numbers and the ledger invariant survive the roll-up.
        #expect(try store.lifetimeTotals(profile: Fixture.profile) == totalsBefore)
        #expect(try store.dailyTotals(profile: Fixture.profile) == daysBefore)
        let check = try #require(try store.verifyLedger().first)
        #expect(check.isConsistent, "\(check)")
        // Plans are never deleted (SPEC §12); focus sessions over for 90 days are.
        #expect(try store.load().plans == plansBefore)
        #expect(try store.load().profiles.first?.focusSessions.map(\.id) == [45, 90]) // day 0 is past the cut (day ~30)
        #expect(report.focusSessionsDeleted == 1)

        // A second run at the same instant finds nothing more to do.
        #expect(try store.applyRetention(now: now) == RetentionReport())
        #expect(try store.lifetimeTotals(profile: Fixture.profile) == totalsBefore)
    }

    @Test func nothing_within_90_days_is_touched() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        _ = try Fixture.busyAccount(in: store)
        let before = try store.ledger(profile: Fixture.profile).map(\.id)
        let report = try store.applyRetention(now: Fixture.start + .hours(24 * 89))
        #expect(report == RetentionReport())
        #expect(try store.ledger(profile: Fixture.profile).map(\.id) == before)
    }
}
