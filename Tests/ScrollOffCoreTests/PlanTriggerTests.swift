import ScrollOffCore
import Testing

/// SPEC §8: the plan shown at a bypass is the one whose trigger fits the moment (`PlanTrigger`).
@Suite("Plans: the trigger that fits the moment")
struct PlanTriggerTests {
    static let known = ["instagram", "Instagram", "youtube", "YouTube", "tiktok", "TikTok"]

    static func at(_ hour: Int, _ minute: Int = 0, weekday: Int = 4, entry: [String]? = ["instagram", "Instagram"]) -> PlanTrigger.Moment {
        PlanTrigger.Moment(minuteOfDay: hour * 60 + minute, weekday: weekday, entryNames: entry)
    }

    @Test(arguments: [
        ("I feel bored", 22, 0),
        ("I can't sleep at night", 22, 2),
        ("I can't sleep at night", 8, -2),
        ("I wake up in the morning", 8, 2),
        ("I wake up in the morning", 22, -2),
        ("after lunch", 12, 2),
        ("in the evening after dinner", 19, 2),
        ("it is 22:00 and I am in bed", 23, 2),
        ("at 10pm", 21, 2),
        ("at 10pm", 13, -2),
        ("at 7am", 8, 2),
    ])
    func time_of_day_cues_score_for_and_against(_ trigger: String, _ hour: Int, _ expected: Int) {
        #expect(PlanTrigger.score(trigger, at: Self.at(hour), knownEntryNames: Self.known) == expected)
    }

    @Test func a_trigger_naming_the_entry_scores_4_and_another_entry_minus_4() {
        #expect(PlanTrigger.score("I open Instagram", at: Self.at(12), knownEntryNames: Self.known) == 4)
        #expect(PlanTrigger.score("YouTube pulls me in", at: Self.at(12), knownEntryNames: Self.known) == -4)
        // Entry and time together: 4 + 2.
        #expect(PlanTrigger.score("I reach for instagram at night", at: Self.at(23), knownEntryNames: Self.known) == 6)
        // Without an entry in the moment, a trigger naming one does not fit.
        #expect(PlanTrigger.score("I open instagram", at: Self.at(12, entry: nil), knownEntryNames: Self.known) == -4)
    }

    @Test func weekday_cues_score_one_point() {
        // Weekday 1 = Sunday, 4 = Wednesday.
        #expect(PlanTrigger.score("on weekends", at: Self.at(12, weekday: 1), knownEntryNames: []) == 1)
        #expect(PlanTrigger.score("on weekends", at: Self.at(12, weekday: 4), knownEntryNames: []) == -1)
        #expect(PlanTrigger.score("Wednesday afternoons", at: Self.at(15, weekday: 4), knownEntryNames: []) == 3)
        #expect(PlanTrigger.score("on a school day", at: Self.at(15, weekday: 2), knownEntryNames: []) == 1)
    }

    @Test func best_plan_at_2200_is_the_night_one_and_at_0800_the_morning_one() {
        // Oldest first: the recency is the position.
        let plans = [("I feel bored", 0), ("I can't sleep at night", 1), ("I wake up in the morning", 2)]
        #expect(PlanTrigger.best(plans.map { ($0.0, $0.1) }, at: Self.at(22), knownEntryNames: Self.known) == 1)
        #expect(PlanTrigger.best(plans.map { ($0.0, $0.1) }, at: Self.at(8), knownEntryNames: Self.known) == 2)
        // At 15:00 neither fits; the generic plan does.
        #expect(PlanTrigger.best(plans.map { ($0.0, $0.1) }, at: Self.at(15), knownEntryNames: Self.known) == 0)
    }

    @Test func ties_go_to_the_most_recent_plan_and_plans_for_another_moment_are_not_shown() {
        let plans = [("I feel bored", 0), ("I am waiting around", 1)]
        #expect(PlanTrigger.best(plans.map { ($0.0, $0.1) }, at: Self.at(12), knownEntryNames: []) == 1)
        let elsewhere = [("YouTube at night", 0)]
        #expect(PlanTrigger.best(elsewhere.map { ($0.0, $0.1) }, at: Self.at(12), knownEntryNames: Self.known) == nil)
    }

    @Test func the_entry_plan_beats_a_time_plan_for_that_entry_only() {
        let plans = [("YouTube pulls me in", 0), ("I can't sleep at night", 1)]
        let youtube = Self.at(22, entry: ["youtube", "YouTube"])
        #expect(PlanTrigger.best(plans.map { ($0.0, $0.1) }, at: youtube, knownEntryNames: Self.known) == 0)
        #expect(PlanTrigger.best(plans.map { ($0.0, $0.1) }, at: Self.at(22), knownEntryNames: Self.known) == 1)
    }
}
