import Testing
@testable import ScrollOffCore

/// Daily allowances (SPEC §4a): granted at local midnight per weekday, spent before earned credit,
/// never rolled over, each grant and reset an `allowance` ledger row, a curfew still wins.
@Suite struct AllowanceTests {
    static let berlin = LocalClock("Europe/Berlin")

    /// A wallet with `starter` seconds of starter credit and the given allowances.
    static func harness(_ allowances: [Allowance], starter: Int64 = 0, zone: String = "Europe/Berlin", start: Instant) -> WalletHarness {
        var k = Preset.strict.knobs
        k.starterCredit = .seconds(starter)
        var h = WalletHarness(k, zone: zone, start: start)
        h.wallet.policy.allowances = allowances
        if starter > 0 { h.record(h.wallet.grantStarter(at: start)) }
        return h
    }

    static func youtube(_ seconds: Int64, _ days: Weekdays = .daily) -> Allowance {
        Allowance(entries: ["youtube"], secondsByWeekday: []).setting(seconds, on: days)
    }

    @Test func allowance_is_granted_at_once_spent_and_reset_at_local_midnight_without_rollover() throws {
        let t = Self.berlin(2026, 11, 23, 10)
        var h = Self.harness([Self.youtube(3600)], start: t)
        h.advance(to: t)
        #expect(h.rows(.allowance).map(\.deltaSeconds) == [3600])
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: t) == 3600)
        try h.use("youtube", for: .minutes(20), at: t)
        h.advance(to: t + .minutes(30))
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: t + .minutes(30)) == 2400)
        let midnight = Self.berlin(2026, 11, 24)
        h.advance(to: midnight + .seconds(1))
        // The 40 min left go at midnight (a reset row) and a fresh hour comes (a grant row), both at midnight.
        let rows = h.rows(.allowance)
        #expect(rows.map(\.deltaSeconds) == [3600, -2400, 3600])
        #expect(rows.dropFirst().allSatisfy { $0.time == midnight })
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: midnight + .seconds(1)) == 3600)
        #expect(h.balance == h.ledgerSum)
    }

    struct Night: Sendable, CustomTestStringConvertible {
        var label: String, day: (Int, Int, Int), nextMidnightUTC: String
        var testDescription: String { label }
    }

    /// Local midnight in Berlin around both DST changes of 2026, and an ordinary night, as UTC.
    static let nights: [Night] = [
        Night(label: "ordinary night (CET)", day: (2026, 11, 23), nextMidnightUTC: "2026-11-23T23:00:00Z"),
        Night(label: "into the spring-forward day (23 h long)", day: (2026, 3, 28), nextMidnightUTC: "2026-03-28T23:00:00Z"),
        Night(label: "out of the spring-forward day", day: (2026, 3, 29), nextMidnightUTC: "2026-03-29T22:00:00Z"),
        Night(label: "into the fall-back day (25 h long)", day: (2026, 10, 24), nextMidnightUTC: "2026-10-24T22:00:00Z"),
        Night(label: "out of the fall-back day", day: (2026, 10, 25), nextMidnightUTC: "2026-10-25T23:00:00Z"),
    ]

    @Test(arguments: nights)
    func allowance_resets_at_local_midnight_across_DST_nights(n: Night) {
        let noon = Self.berlin(n.day.0, n.day.1, n.day.2, 12)
        var h = Self.harness([Self.youtube(1800)], start: noon)
        // No block in force, so nothing but the allowance's midnight is due.
        h.advance(to: noon, block: false)
        let midnight = RulesTime.utc(n.nextMidnightUTC)
        #expect(h.wallet.nextDueInstant == midnight)
        h.advance(to: midnight - .seconds(1), block: false)
        #expect(h.rows(.allowance).count == 1, "nothing resets before local midnight")
        h.advance(to: midnight, block: false)
        #expect(h.rows(.allowance).map(\.deltaSeconds) == [1800, -1800, 1800])
        #expect(h.rows(.allowance).last?.time == midnight)
        #expect(h.balance == h.ledgerSum)
    }

    struct Weekday: Sendable, CustomTestStringConvertible {
        var label: String, day: Int, expected: Int64?
        var testDescription: String { label }
    }

    /// 1 h on weekdays, 2 h at weekends, from Friday 2026-11-27 to Tuesday 2026-12-01.
    static let week: [Weekday] = [
        Weekday(label: "Friday: 1 h", day: 27, expected: 3600),
        Weekday(label: "Saturday: 2 h", day: 28, expected: 7200),
        Weekday(label: "Sunday: 2 h", day: 29, expected: 7200),
        Weekday(label: "Monday: 1 h", day: 30, expected: 3600),
    ]

    @Test(arguments: week)
    func weekday_and_weekend_allowances_follow_the_local_weekday(w: Weekday) {
        let allowance = Self.youtube(3600, .weekdays).setting(7200, on: .weekends)
        let start = Self.berlin(2026, 11, 26, 18)
        var h = Self.harness([allowance], start: start)
        h.advance(to: start)
        let t = Self.berlin(2026, 11, w.day, 9)
        h.advance(to: t)
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: t) == w.expected)
        #expect(h.rows(.allowance).last?.deltaSeconds == w.expected)
        #expect(h.balance == h.ledgerSum)
    }

    @Test func a_day_without_an_allowance_grants_nothing_and_says_none_is_left() {
        let sunday = Self.berlin(2026, 11, 29, 9)
        var h = Self.harness([Self.youtube(3600, .weekdays)], start: sunday)
        h.advance(to: sunday)
        #expect(h.rows(.allowance).isEmpty)
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: sunday) == nil)
        #expect(h.wallet.nextAllowanceAt(for: "youtube", after: sunday) == Self.berlin(2026, 11, 30))
    }

    @Test func allowance_is_spent_before_earned_credit_and_only_on_its_entries() throws {
        let t = Self.berlin(2026, 11, 23, 10)
        var h = Self.harness([Self.youtube(600)], starter: 120, start: t)
        h.advance(to: t)
        try h.use("youtube", for: .minutes(5), at: t)
        h.advance(to: t + .minutes(6))
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: t + .minutes(6)) == 300)
        #expect(h.wallet.availableSeconds(for: "instagram") == 120, "the starter credit is untouched")
        // Another entry never draws on youtube's allowance.
        try h.use("instagram", at: t + .minutes(6))
        h.advance(to: t + .minutes(10))
        #expect(h.wallet.availableSeconds(for: "instagram") == 0)
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: t + .minutes(10)) == 300)
        // youtube runs on past its allowance into earned credit only when there is some: none left.
        #expect(h.balance == 300)
        #expect(h.balance == h.ledgerSum)
    }

    @Test func an_allowance_for_any_entry_is_spent_first_on_every_entry() throws {
        let t = Self.berlin(2026, 11, 23, 10)
        var h = Self.harness([Allowance(entries: [], secondsByWeekday: []).setting(300, on: .daily)], starter: 120, start: t)
        h.advance(to: t)
        try h.use("reddit", for: .minutes(4), at: t)
        h.advance(to: t + .minutes(5))
        #expect(h.wallet.allowanceLeftSeconds(for: "reddit", at: t + .minutes(5)) == 60)
        #expect(h.wallet.allowanceLeftSeconds(for: "instagram", at: t + .minutes(5)) == 60)
        #expect(h.balance == 180)
        #expect(h.balance == h.ledgerSum)
    }

    @Test func a_used_up_allowance_is_refused_with_when_it_starts_again() throws {
        let t = Self.berlin(2026, 11, 23, 20)
        var h = Self.harness([Self.youtube(60)], start: t)
        h.advance(to: t)
        try h.use("youtube", at: t)
        h.advance(to: t + .minutes(2))
        #expect(h.wallet.runningSpend == nil, "the spend ended when the allowance ran out")
        do {
            try h.use("youtube", at: t + .minutes(2))
            Issue.record("a use with the allowance spent and no credit must be refused")
        } catch {
            #expect(error.refusal?.rule == .allowanceUsedUp)
            #expect(error.refusal?.opensAt == Self.berlin(2026, 11, 24))
        }
    }

    @Test func a_curfew_wins_over_an_unspent_allowance() {
        let t = Self.berlin(2026, 11, 23, 22)
        var h = Self.harness([Self.youtube(3600)], start: t)
        h.advance(to: t)
        do {
            try h.use("youtube", at: t, curfewEndsAt: Self.berlin(2026, 11, 24, 7))
            Issue.record("a curfew must refuse the spend")
        } catch {
            #expect(error.refusal?.rule == .curfew)
        }
        #expect(h.wallet.allowanceLeftSeconds(for: "youtube", at: t) == 3600)
    }

    @Test func raising_grants_the_difference_and_lowering_takes_back_at_most_what_is_left() throws {
        let t = Self.berlin(2026, 11, 23, 10)
        var h = Self.harness([Self.youtube(1800)], start: t)
        h.advance(to: t)
        h.wallet.policy.allowances = [Self.youtube(3600)]
        h.advance(to: t + .minutes(1))
        #expect(h.rows(.allowance).map(\.deltaSeconds) == [1800, 1800])
        try h.use("youtube", for: .minutes(50), at: t + .minutes(1))
        h.advance(to: t + .minutes(51))
        h.wallet.policy.allowances = [Self.youtube(600)]
        h.advance(to: t + .minutes(52))
        // 10 min were left; lowering by 50 min takes back those 10 min only.
        #expect(h.rows(.allowance).map(\.deltaSeconds) == [1800, 1800, -600])
        h.wallet.policy.allowances = []
        h.advance(to: t + .minutes(53))
        #expect(h.rows(.allowance).count == 3, "nothing left to take back")
        #expect(h.balance == h.ledgerSum)
        #expect(h.balance == 0)
    }

    @Test func a_clock_set_back_to_yesterday_grants_no_second_allowance() {
        let t = Self.berlin(2026, 11, 24, 9)
        var h = Self.harness([Self.youtube(3600)], start: t)
        h.advance(to: t)
        h.record(h.wallet.rewind(to: Self.berlin(2026, 11, 23, 23)))
        h.advance(to: Self.berlin(2026, 11, 23, 23, 30))
        #expect(h.rows(.allowance).map(\.deltaSeconds) == [3600])
        #expect(h.balance == h.ledgerSum)
    }

    @Test func allowance_words_and_loosening() {
        let a = Self.youtube(3600, .weekdays).setting(7200, on: .weekends)
        #expect(a.words == "1 h on weekdays, 2 h at weekends for youtube")
        #expect(a.isLoosened(by: a.setting(7300, on: .saturday)))
        #expect(!a.isLoosened(by: a.setting(60, on: .weekdays)))
        #expect(a.isTightened(by: a.setting(60, on: .weekdays)))
        #expect(a.key == "youtube")
        #expect(Allowance(entries: [], secondsByWeekday: []).key == "*")
    }
}
