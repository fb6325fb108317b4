import Testing
@testable import ScrollOffCore

/// SPEC §4 earning, daily cap, rollover, starter credit; SPEC §11 freeze after a jump back.
struct WalletEarningTests {
    let berlin = LocalClock("Europe/Berlin")

    @Test func award_of_300s_lands_at_exactly_the_60th_minute() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 10))
        h.advance(to: berlin(2026, 11, 21, 10) - Span(milliseconds: 1))
        #expect(h.rows.isEmpty)
        h.advance(to: berlin(2026, 11, 21, 10))
        #expect(h.rows == [LedgerRow(time: berlin(2026, 11, 21, 10), deltaSeconds: 300, reason: .earn, note: "1 h without scrolling")])
        #expect(h.balance == 300)
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 11))
    }

    @Test func a_late_advance_writes_every_award_at_its_own_instant() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 12, 30))
        #expect(h.rows.map(\.time) == [berlin(2026, 11, 21, 10), berlin(2026, 11, 21, 11), berlin(2026, 11, 21, 12)])
        #expect(h.balance == 900)
    }

    @Test func no_earning_while_no_block_is_in_force() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9), block: false)
        #expect(h.wallet.nextAwardAt == nil)
        h.advance(to: berlin(2026, 11, 21, 15), block: false)
        #expect(h.rows.isEmpty)
    }

    @Test func block_lifted_for_a_while_starts_the_hour_again() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9, 30), block: false)
        h.advance(to: berlin(2026, 11, 21, 9, 40), block: true)
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 10, 40))
        h.advance(to: berlin(2026, 11, 21, 10, 39, 59))
        #expect(h.rows.isEmpty)
    }

    @Test func reporting_the_block_again_does_not_restart_the_hour() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9, 45), block: true)
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 10))
    }

    struct CapCase: Sendable, CustomTestStringConvertible {
        var capMinutes: Int64
        /// Seconds credited by each of the first 11 awards of the day.
        var credited: [Int64]
        var testDescription: String { "cap \(capMinutes) min" }
    }

    static let capCases: [CapCase] = [
        CapCase(capMinutes: 45, credited: [300, 300, 300, 300, 300, 300, 300, 300, 300, 0, 0]),
        CapCase(capMinutes: 47, credited: [300, 300, 300, 300, 300, 300, 300, 300, 300, 120, 0]),
        CapCase(capMinutes: 0, credited: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    ]

    /// SPEC §4: the award that would pass the cap (the 46th minute on a 45-minute day) is discarded.
    @Test(arguments: capCases)
    func award_beyond_the_daily_cap_is_discarded_as_capDiscard(_ c: CapCase) {
        let k = Knobs.strict { $0.dailyEarnCap = .minutes(c.capMinutes) }
        var h = WalletHarness(k, start: berlin(2026, 11, 21, 0))
        h.advance(to: berlin(2026, 11, 21, 0))
        h.advance(to: berlin(2026, 11, 21, 11))
        #expect(h.rows(.earn).count == 11)
        #expect(h.rows(.earn).allSatisfy { $0.deltaSeconds == 300 })
        for (i, expected) in c.credited.enumerated() {
            let hour = berlin(2026, 11, 21, i + 1)
            let discard = h.rows(.capDiscard).first { $0.time == hour }
            #expect((discard?.deltaSeconds ?? 0) == expected - 300, "award \(i + 1)")
        }
        #expect(h.balance == c.credited.reduce(0, +))
        #expect(h.balance == h.ledgerSum)
        #expect(h.wallet.today(at: berlin(2026, 11, 21, 11)).earnedSeconds == c.credited.reduce(0, +))
        let capEvents = h.events.filter { if case .dailyCapReached = $0.kind { true } else { false } }
        #expect(capEvents.count == c.credited.filter { $0 < 300 }.count)
        let earnedEvents = h.events.compactMap { if case .earned(let s) = $0.kind { s } else { nil } }
        #expect(earnedEvents == c.credited.filter { $0 > 0 })
        #expect(h.rows(.capDiscard).allSatisfy { $0.note == "over the daily cap of \(SpanWords.describe(.minutes(c.capMinutes)))" })
    }

    @Test func daily_cap_starts_fresh_at_local_midnight() {
        let k = Knobs.strict { $0.rolloverDays = 1 }
        var h = WalletHarness(k, start: berlin(2026, 11, 21, 13))
        h.advance(to: berlin(2026, 11, 21, 13))
        h.advance(to: berlin(2026, 11, 22, 1))
        // 14:00 … 22:00 fill the 45 min (9 awards), 23:00 is discarded, 00:00 and 01:00 count for the 22nd.
        #expect(h.rows(.capDiscard).map(\.time) == [berlin(2026, 11, 21, 23)])
        #expect(h.wallet.today(at: berlin(2026, 11, 22, 1)).earnedSeconds == 600)
        #expect(h.balance == 2700 + 600)
    }

    @Test func same_day_credit_expires_at_local_midnight() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 10), block: false)
        h.advance(to: berlin(2026, 11, 21, 23, 59, 59), block: false)
        #expect(h.balance == 300)
        h.advance(to: berlin(2026, 11, 22, 0), block: false)
        #expect(h.rows(.expire) == [LedgerRow(time: berlin(2026, 11, 22, 0), deltaSeconds: -300, reason: .expire, note: "earned on 2026-11-21")])
        #expect(h.balance == 0)
        #expect(h.ledgerSum == 0)
    }

    @Test func three_day_rollover_expires_at_midnight_three_days_later() {
        var h = WalletHarness(Preset.balanced.knobs, start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 10), block: false)
        h.advance(to: berlin(2026, 11, 24, 23, 59, 59), block: false)
        #expect(h.rows(.expire).isEmpty)
        #expect(h.balance == 300)
        h.advance(to: berlin(2026, 11, 25, 0), block: false)
        #expect(h.rows(.expire).map(\.time) == [berlin(2026, 11, 25, 0)])
        #expect(h.balance == 0)
    }

    @Test func rollover_expiry_follows_local_midnight_across_a_dst_change() {
        // Earned on Saturday 2026-10-24 in Berlin; DST ends on the 25th, so that day has 25 hours.
        let k = Knobs.strict { $0.rolloverDays = 1 }
        var h = WalletHarness(k, start: berlin(2026, 10, 24, 9))
        h.advance(to: berlin(2026, 10, 24, 9))
        h.advance(to: berlin(2026, 10, 24, 10), block: false)
        h.advance(to: berlin(2026, 10, 26, 0), block: false)
        #expect(h.rows(.expire).map(\.time) == [berlin(2026, 10, 26, 0)])
    }

    @Test func credit_is_spent_oldest_first() throws {
        var h = WalletHarness(Preset.balanced.knobs, start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 10), block: false)
        h.advance(to: berlin(2026, 11, 22, 9), block: true)
        h.advance(to: berlin(2026, 11, 22, 10), block: false)
        try h.use("instagram", for: .seconds(400), at: berlin(2026, 11, 22, 12))
        h.advance(to: berlin(2026, 11, 22, 13), block: false)
        // 300 s from the 21st, then 100 s from the 22nd.
        #expect(h.wallet.state.batches.map(\.origin) == [.earned(.init(year: 2026, month: 11, day: 22))])
        #expect(h.wallet.state.batches.map(\.remaining) == [200])
        h.advance(to: berlin(2026, 11, 26, 0), block: false)
        #expect(h.rows(.expire).map(\.deltaSeconds) == [-200])
        #expect(h.rows(.expire).map(\.time) == [berlin(2026, 11, 26, 0)])
        #expect(h.balance == 0 && h.ledgerSum == 0)
    }

    @Test func starter_credit_is_given_once_and_never_expires() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.record(h.wallet.grantStarter(at: berlin(2026, 11, 21, 9)))
        h.record(h.wallet.grantStarter(at: berlin(2026, 11, 21, 9, 5)))
        #expect(h.rows == [LedgerRow(time: berlin(2026, 11, 21, 9), deltaSeconds: 120, reason: .starter, note: "starter credit")])
        h.advance(to: berlin(2027, 12, 31, 23), block: false)
        #expect(h.rows(.expire).isEmpty)
        #expect(h.balance == 120)
    }

    @Test func starter_credit_is_outside_the_daily_cap_and_spent_after_earned_credit() throws {
        var h = WalletHarness(start: berlin(2026, 11, 21, 0))
        h.record(h.wallet.grantStarter(at: berlin(2026, 11, 21, 0)))
        h.advance(to: berlin(2026, 11, 21, 0))
        h.advance(to: berlin(2026, 11, 21, 9), block: false)
        #expect(h.balance == 2700 + 120)
        try h.use("reddit", for: .seconds(2700), at: berlin(2026, 11, 21, 10))
        h.advance(to: berlin(2026, 11, 21, 12), block: false)
        #expect(h.wallet.state.batches.map(\.origin) == [.starter])
        #expect(h.balance == 120)
    }

    @Test func frozen_earning_awards_nothing_until_the_freeze_ends() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        let midnight = berlin(2026, 11, 22, 0)
        h.record(h.wallet.freezeEarning(until: midnight, at: berlin(2026, 11, 21, 9, 30)))
        #expect(h.wallet.earningFrozen(at: berlin(2026, 11, 21, 12)) == midnight)
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 22, 1))
        h.advance(to: berlin(2026, 11, 22, 0, 59, 59))
        #expect(h.rows.isEmpty)
        h.advance(to: berlin(2026, 11, 22, 1))
        #expect(h.rows(.earn).map(\.time) == [berlin(2026, 11, 22, 1)])
        #expect(h.events.first?.kind == .earningFrozen(until: midnight))
    }

    @Test func block_coming_into_force_during_a_freeze_waits_for_its_end() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.record(h.wallet.freezeEarning(until: berlin(2026, 11, 22, 0), at: berlin(2026, 11, 21, 9)))
        h.advance(to: berlin(2026, 11, 21, 20), block: true)
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 22, 1))
    }

    @Test func instants_before_the_last_one_are_treated_as_now() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 10))
        h.advance(to: berlin(2026, 11, 21, 8), block: true)
        h.advance(to: berlin(2026, 11, 21, 10, 30))
        #expect(h.rows(.earn).count == 1)
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 11))
    }

    @Test func resume_after_the_helper_was_down_earns_nothing_for_the_gap() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 10, 30))
        #expect(h.rows(.earn).count == 1)
        let saved = h.wallet.state
        var resumed = WalletHarness(start: berlin(2026, 11, 21, 9))
        resumed.wallet = Wallet(state: saved, policy: h.wallet.policy)
        resumed.rows = h.rows
        resumed.record(resumed.wallet.resume(at: berlin(2026, 11, 22, 8), blockInForce: true))
        #expect(resumed.rows(.earn).count == 1)
        #expect(resumed.rows(.expire).map(\.time) == [berlin(2026, 11, 22, 0)])
        #expect(resumed.wallet.nextAwardAt == berlin(2026, 11, 22, 9))
        #expect(resumed.balance == resumed.ledgerSum)
    }

    @Test func a_reload_with_a_shorter_interval_awards_at_the_next_step_never_in_the_past() {
        var h = WalletHarness(start: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9))
        h.advance(to: berlin(2026, 11, 21, 9, 50))
        h.wallet.policy.knobs.earnInterval = .minutes(30)
        h.advance(to: berlin(2026, 11, 21, 9, 50))
        #expect(h.rows(.earn).map(\.time) == [berlin(2026, 11, 21, 9, 50)])
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 10, 20))
    }

    @Test func a_zone_moved_west_does_not_start_a_second_daily_cap() {
        // 45 min earned on the 21st in Tokyo; the profile moves to Los Angeles, where it is the 20th.
        let tokyo = LocalClock("Asia/Tokyo")
        var h = WalletHarness(zone: "Asia/Tokyo", start: tokyo(2026, 11, 21, 0))
        h.advance(to: tokyo(2026, 11, 21, 0))
        h.advance(to: tokyo(2026, 11, 21, 9))
        #expect(h.wallet.today(at: tokyo(2026, 11, 21, 9)).earnedSeconds == 2700)
        h.wallet.policy.calendar = LocalCalendar(identifier: "America/Los_Angeles")!
        h.advance(to: tokyo(2026, 11, 21, 12))
        #expect(h.rows(.capDiscard).count == 3)
        #expect(h.balance == 2700)
    }
}
