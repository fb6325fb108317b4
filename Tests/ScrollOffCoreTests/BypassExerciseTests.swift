import Testing
@testable import ScrollOffCore

/// SPEC §5 step 3: the "try this first" catalogue and its recorded outcome.
struct BypassExerciseTests {
    @Test(arguments: [("breath", Span.minutes(2)), ("grounding", .minutes(2)), ("body-scan", .minutes(3))])
    func catalogue_has_the_spec_exercises_with_their_lengths(_ id: String, _ duration: Span) throws {
        let e = try #require(Exercise.named(id))
        #expect(e.duration == duration)
        #expect(e.steps.count >= 4)
        #expect(e.steps.allSatisfy { !$0.isEmpty })
    }

    @Test func catalogue_offers_exactly_three_exercises_in_order() {
        #expect(Exercise.catalogue.map(\.id) == ["breath", "grounding", "body-scan"])
        #expect(Exercise.named("doomscroll") == nil)
    }

    @Test func grounding_counts_down_from_five_to_one() throws {
        let steps = try #require(Exercise.named("grounding")).steps
        for (i, n) in ["5", "4", "3", "2", "1"].enumerated() { #expect(steps[i].contains(n)) }
    }

    @Test(arguments: ExerciseRecord.Outcome.allCases)
    func outcome_becomes_an_event_for_its_entry(_ outcome: ExerciseRecord.Outcome) {
        let t = Instant(secondsSince1970: 1_795_000_000)
        let record = ExerciseRecord(exerciseID: "breath", entry: "instagram", time: t, outcome: outcome)
        let event = record.event
        #expect(event.time == t)
        #expect(event.entry == "instagram")
        #expect(event.kind == .exercise(record))
        #expect(!event.message.isEmpty)
    }
}
