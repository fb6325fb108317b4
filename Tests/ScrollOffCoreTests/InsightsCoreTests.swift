import ScrollOffCore
import Testing

@Suite("Insights: the pure figures")
struct InsightsCoreTests {
    static let berlin = LocalCalendar(identifier: "Europe/Berlin")!
    static func day(_ y: Int, _ m: Int, _ d: Int) -> LocalCalendar.Day { LocalCalendar.Day(year: y, month: m, day: d) }

    @Test(arguments: [
        (Int64(21), Int64(20), Optional(5)), (20, 21, Optional(-5)), (3, 2, Optional(50)), (1, 3, Optional(-67)),
        (5, 0, nil), (0, 4, Optional(-100)), (7, 7, Optional(0)),
    ])
    func change_in_percent_rounds_half_away_from_zero(now: Int64, before: Int64, expected: Int?) {
        #expect(InsightChange.percent(now, before) == expected)
    }

    @Test func peak_hours_wrap_around_midnight() {
        var d = InsightDay(day: Self.day(2026, 11, 20))
        d.urges = 5
        d.hourUrges[23] = 3
        d.hourUrges[0] = 2
        d.hourUrges[12] = 1
        let i = Insights(days: [d], today: d.day, periodDays: 1, calendar: Self.berlin)
        #expect(i.peakHours == HourRange(start: 23, end: 1, urges: 5))
    }

    /// The household page once said "Most urges 5–7 h" of a single urge at 06:30.
    @Test(arguments: [
        ([6: 1], HourRange(start: 6, end: 8, urges: 1)),
        ([23: 4], HourRange(start: 23, end: 1, urges: 4)),
        ([0: 2], HourRange(start: 0, end: 2, urges: 2)),
        ([8: 1, 9: 1, 21: 2], HourRange(start: 21, end: 23, urges: 2)),
        ([8: 2, 9: 1, 21: 2, 22: 1], HourRange(start: 8, end: 10, urges: 3)),
    ])
    func peak_hours_start_at_the_busier_hour_then_the_earliest(urges: [Int: Int], expected: HourRange) {
        var d = InsightDay(day: Self.day(2026, 11, 20))
        for (h, n) in urges { d.hourUrges[h] = n; d.urges += n }
        let i = Insights(days: [d], today: d.day, periodDays: 1, calendar: Self.berlin)
        #expect(i.peakHours == expected)
    }

    @Test func no_urges_means_no_peak_no_weekday_and_no_share() {
        let i = Insights(days: [], today: Self.day(2026, 11, 20), periodDays: 7, calendar: Self.berlin)
        #expect(i.peakHours == nil && i.strongestWeekday == nil && i.toughestWeekday == nil && i.totals.resistedPercent == nil)
        #expect(i.streakDays == 0 && i.milestones.isEmpty && i.trend.count == 7)
    }

    @Test func today_breaking_the_streak_so_far_does_not_end_it() {
        var first = InsightDay(day: Self.day(2026, 11, 18))
        first.earnedSeconds = 300
        var today = InsightDay(day: Self.day(2026, 11, 20))
        today.tokens = 1
        let i = Insights(days: [first, today], today: today.day, periodDays: 1, calendar: Self.berlin)
        // 11-18 and 11-19 (nothing recorded keeps it); today does not count yet.
        #expect(i.streakDays == 2 && i.streakStart == Self.day(2026, 11, 18))
    }

    @Test func milestones_have_stable_keys_for_the_streak_they_belong_to() {
        var first = InsightDay(day: Self.day(2026, 8, 1))
        first.protectedSeconds = 100 * 3600
        let i = Insights(days: [first], today: Self.day(2026, 11, 8), periodDays: 7, calendar: Self.berlin)
        #expect(i.streakDays == 100)
        #expect(i.milestones.map(\.key) == ["streak-7-from-2026-08-01", "streak-30-from-2026-08-01", "streak-60-from-2026-08-01",
                                            "streak-100-from-2026-08-01", "protected-100h"])
        #expect(i.milestones.map(\.reachedOn) == [Self.day(2026, 8, 7), Self.day(2026, 8, 30), Self.day(2026, 9, 29),
                                                  Self.day(2026, 11, 8), Self.day(2026, 8, 1)])
    }

    /// Berlin springs forward on Sunday 2026-03-29: 19:00 CEST is 17:00 UTC that day, 18:00 UTC the week before.
    @Test func weekly_digest_is_sunday_19_00_local_across_dst() {
        let saturday = Instant(secondsSince1970: 1_774_700_000) // 2026-03-28 12:13 UTC
        #expect(WeeklyDigest.next(after: saturday, calendar: Self.berlin) == Instant(secondsSince1970: 1_774_803_600))
        let latest = WeeklyDigest.latest(atOrBefore: saturday, calendar: Self.berlin)
        #expect(latest.weekEnding == Self.day(2026, 3, 22) && latest.at == Instant(secondsSince1970: 1_774_202_400))
        // At 19:00 exactly the digest is due; the next one is a week later.
        let sunday = Instant(secondsSince1970: 1_774_803_600)
        #expect(WeeklyDigest.latest(atOrBefore: sunday, calendar: Self.berlin).weekEnding == Self.day(2026, 3, 29))
        #expect(WeeklyDigest.next(after: sunday, calendar: Self.berlin) == Instant(secondsSince1970: 1_775_408_400))
    }
}
