import ControlAPI
import Foundation
import ScrollOffCore
import Testing

/// SPEC §7: two or three short sentences built from the numbers, in a kind voice: what the person
/// did, compared only upward, never a scold.
@Suite("Insight sentences: numbers first, never shaming")
struct InsightSentencesTests {
    static let utc = LocalCalendar(identifier: "UTC")!
    static let sunday = LocalCalendar.Day(year: 2026, month: 11, day: 22)

    static func day(_ d: Int, urges: Int = 0, resisted: Int = 0, protected: Int64 = 0, earned: Int64 = 0, tokens: Int = 0) -> InsightDay {
        var day = InsightDay(day: LocalCalendar.Day(year: 2026, month: 11, day: d))
        day.urges = urges
        day.resisted = resisted
        // Most in hour 21, the rest in 22: "most urges 21–23 h".
        day.hourUrges[21] = urges - urges / 2
        day.hourUrges[22] = urges / 2
        day.protectedSeconds = protected
        day.earnedSeconds = earned
        day.tokens = tokens
        return day
    }

    static func week(_ days: [InsightDay]) -> StatsReport {
        StatsReport(profile: "default", period: .week, insights: Insights(days: days, today: sunday, periodDays: 7, calendar: utc),
                    calendar: utc, notes: [])
    }

    @Test func fourteen_of_seventeen_three_more_than_last_week_as_the_issue_says() {
        let report = Self.week([Self.day(10, urges: 12, resisted: 11, protected: 3600),
                                Self.day(18, urges: 17, resisted: 14, protected: 36_000, earned: 3000)])
        #expect(report.summary == [
            "You resisted 14 of 17 urges this week — 3 more than last week.",
            "Your blocks protected \(TimeWords.span(seconds: 36_000)) and earned you \(TimeWords.span(seconds: 3000)) of credit.",
            "13 days in a row on your streak — your longest yet.",
        ])
    }

    @Test func a_week_with_nothing_resisted_says_what_was_noticed_and_what_helps() {
        // Today, with a token: no streak to speak of, so the hour that holds the urges is named.
        let report = Self.week([Self.day(22, urges: 5, tokens: 1)])
        #expect(report.summary == [
            "You noticed 5 urges this week — each one is a chance to try your plan.",
            "Most urges come 21–23 h; a plan for that time can help.",
        ])
    }

    /// Every mix of this week's and last week's numbers, tokens and protected time: 1 to 3
    /// sentences, each a full sentence, none comparing downward or scolding.
    @Test func no_mix_of_numbers_gives_a_shaming_or_downward_sentence() {
        let unkind = ["only", "fewer", "less", "fail", "worse", "lost", "0 of", "broke", "gave in", "should", "again", "down"]
        var checked = 0
        for urges in 0...4 {
            for resisted in 0...urges {
                for before in 0...5 {
                    for tokens in 0...1 {
                        for protected in [Int64(0), 7200] {
                            let report = Self.week([Self.day(11, urges: before + 1, resisted: before, protected: protected),
                                                    Self.day(19, urges: urges, resisted: resisted, protected: protected, tokens: tokens)])
                            let text = report.summary.joined(separator: " ")
                            #expect((1...3).contains(report.summary.count), "\(report.summary)")
                            #expect(report.summary.allSatisfy { $0.hasSuffix(".") && ($0.first?.isUppercase == true || $0.first?.isNumber == true) },
                                    "\(report.summary)")
                            for word in unkind { #expect(!text.lowercased().contains(word), "“\(word)” in \(text)") }
                            if urges > 0 { #expect(text.contains("\(urges) urge"), "the count comes first: \(text)") }
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 15 * 6 * 2 * 2)
    }
}
