import Foundation
import GRDB
import ScrollOffCore
import Testing
@testable import Store

@Suite struct LedgerTests {
    @Test func balance_equals_the_sum_of_the_ledger_after_real_wallet_operations() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let account = try Fixture.busyAccount(in: store)
        let check = try #require(try store.verifyLedger().first)
        #expect(check.isConsistent && check.problem == nil)
        #expect(check.balanceSeconds == account.wallet.balanceSeconds)
        #expect(check.ledgerSumSeconds == (try store.ledger(profile: Fixture.profile)).reduce(0) { $0 + $1.row.deltaSeconds })
        #expect(try store.ledger(profile: Fixture.profile).map(\.row.reason).contains(.bypassFree))
    }

    @Test func a_ledger_row_without_its_balance_change_is_detected() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        _ = try Fixture.busyAccount(in: store)
        let t = Fixture.start + .hours(5)
        try store.commit(StateChange([.appendLedger(profile: Fixture.profile, LedgerRow(time: t, deltaSeconds: 45, reason: .adjust))]),
                         anchor: Fixture.anchor(t))
        let check = try #require(try store.verifyLedger().first)
        #expect(!check.isConsistent)
        #expect(check.ledgerSumSeconds == check.balanceSeconds + 45)
        #expect(check.problem?.contains("the ledger sums to") == true)
    }

    @Test func a_ledger_that_once_went_below_zero_is_detected() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let t = Fixture.start
        let p = Fixture.profile
        // Spend before earn: the sums agree (0 = 0) but the balance was -60 in between.
        try store.commit(StateChange([
            .appendLedger(profile: p, LedgerRow(time: t, deltaSeconds: -60, reason: .spend, entry: "x")),
            .appendLedger(profile: p, LedgerRow(time: t, deltaSeconds: 60, reason: .adjust)),
        ]), anchor: Fixture.anchor(t))
        let check = try #require(try store.verifyLedger().first)
        #expect(check.balanceSeconds == check.ledgerSumSeconds)
        #expect(check.lowestRunningSeconds == -60)
        #expect(!check.isConsistent)
        #expect(check.problem?.contains("below zero") == true)
    }

    @Test func each_profile_is_checked_on_its_own() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        try store.commit(StateChange([.saveProfile(Fixture.settings("kids", preset: .strict))]), anchor: Fixture.anchor(Fixture.start))
        var kids = CreditAccount(state: CreditAccountState(asOf: Fixture.start), policy: Fixture.policy(.strict))
        try Fixture.apply(store, &kids, at: Fixture.start, profile: "kids") { $0.grantStarter(at: Fixture.start) }
        _ = try Fixture.busyAccount(in: store)
        let checks = try store.verifyLedger()
        #expect(checks.map(\.profile) == [Fixture.profile, "kids"])
        #expect(checks.allSatisfy { $0.isConsistent })
        #expect(checks.last?.balanceSeconds == 120)
    }
}

@Suite struct WipeTests {
    @Test func wipe_deletes_every_row_and_the_store_keeps_working() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        _ = try Fixture.busyAccount(in: store)
        try store.commit(StateChange([.addPlan(profile: Fixture.profile, when: "w", then: "t", created: Fixture.start)]),
                         anchor: Fixture.anchor(Fixture.start))
        try store.wipe()
        let counts = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'grdb_migrations'").map {
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \($0.quotedDatabaseIdentifier)") ?? -1
            }
        }
        #expect(!counts.isEmpty && counts.allSatisfy { $0 == 0 })
        #expect(try store.load() == StoredState(anchor: nil, profiles: [], plans: [], alternatives: []))
        #expect(mode(of: dir.databasePath) == 0o600)
        // Starting afresh works, ids included.
        let reopened = try Fixture.store(in: dir)
        let receipt = try reopened.commit(StateChange([.addPlan(profile: Fixture.profile, when: "a", then: "b", created: Fixture.start)]),
                                          anchor: Fixture.anchor(Fixture.start))
        #expect(receipt.planIDs == [1])
        #expect(try reopened.integrityCheck().isOK)
    }
}

@Suite struct DailyTotalsTests {
    /// Europe/Berlin: 23:00 UTC on 2026-11-18 is midnight local; 2026-03-29 springs forward at 02:00.
    @Test(arguments: [
        // from (UTC s), to (UTC s), expected seconds per local day
        (Int64(1_795_041_000), Int64(1_795_046_400), [("2026-11-18", Int64(1800)), ("2026-11-19", Int64(3600))]),
        (Int64(1_795_000_000), Int64(1_795_000_600), [("2026-11-18", Int64(600))]),
        (Int64(1_774_738_800), Int64(1_774_749_600), [("2026-03-29", Int64(10_800))]), // 00:00–04:00 local is 3 h on the DST day
    ])
    func protected_time_is_split_at_local_midnight(from: Int64, to: Int64, expected: [(String, Int64)]) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        try store.commit(StateChange([.addProtectedTime(profile: Fixture.profile, from: Instant(secondsSince1970: from),
                                                        to: Instant(secondsSince1970: to))]), anchor: Fixture.anchor(Fixture.start))
        let days = try store.dailyTotals(profile: Fixture.profile)
        #expect(days.map(\.day.description) == expected.map(\.0))
        #expect(days.map(\.protectedSeconds) == expected.map(\.1))
    }

    @Test func a_day_keeps_the_streak_without_tokens_and_with_spend_within_earnings() throws {
        var day = DailyTotals(day: LocalCalendar.Day(year: 2026, month: 11, day: 18))
        day.earnedSeconds = 600
        day.spentSeconds = 600
        #expect(day.keepsStreak)
        day.spentSeconds = 601
        #expect(!day.keepsStreak)
        day.spentSeconds = 0
        day.tokens = 1
        #expect(!day.keepsStreak)
    }
}
