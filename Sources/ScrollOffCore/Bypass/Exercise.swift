/// SPEC §5 step 3: the optional "try this first" exercise offered before a paid bypass. The CLI
/// walks through the steps on a terminal; the helper records what happened.
public struct Exercise: Hashable, Sendable, Codable, Identifiable {
    /// Stable id, used in records and `--json` (`breath`, `grounding`, `body-scan`).
    public var id: String
    public var title: String
    public var duration: Span
    /// Shown one at a time, evenly spread over `duration`. Plain, kind instructions.
    public var steps: [String]

    public init(id: String, title: String, duration: Span, steps: [String]) {
        self.id = id
        self.title = title
        self.duration = duration
        self.steps = steps
    }

    /// The three exercises of SPEC §5, in the order they are offered.
    public static let catalogue: [Exercise] = [
        Exercise(id: "breath", title: "Breath awareness", duration: .minutes(2), steps: [
            "Sit back and let your shoulders drop. There is nothing you need to do for two minutes.",
            "Breathe in through your nose for a count of four.",
            "Breathe out slowly for a count of six.",
            "Notice where you feel the breath most: nose, chest or belly. Just notice it.",
            "If your mind wanders to the app, that is fine. Gently come back to the next breath.",
            "One more slow breath out. Then decide, calmly, what you want to do next.",
        ]),
        Exercise(id: "grounding", title: "5-4-3-2-1 grounding", duration: .minutes(2), steps: [
            "Look around and name 5 things you can see.",
            "Notice 4 things you can feel: your feet on the floor, the chair, the air on your skin.",
            "Listen for 3 things you can hear, near or far.",
            "Find 2 things you can smell, or two smells you like.",
            "Notice 1 thing you can taste, or take a sip of water.",
            "You are here, right now. Choose what comes next with a clear head.",
        ]),
        Exercise(id: "body-scan", title: "Body scan", duration: .minutes(3), steps: [
            "Get comfortable and close your eyes if you like.",
            "Bring your attention to your feet. Notice warmth, pressure or nothing at all.",
            "Move slowly up through your legs and hips, letting them be heavy.",
            "Notice your belly and chest rising and falling with each breath.",
            "Relax your hands, arms and shoulders, one after the other.",
            "Soften your jaw, your forehead, the space around your eyes.",
            "Take in your whole body at once for a few breaths. Well done for pausing.",
        ]),
    ]

    /// The exercise with `id`, if the catalogue has it.
    public static func named(_ id: String) -> Exercise? { catalogue.first { $0.id == id } }
}

/// What came of an offered exercise (SPEC §5 step 3: "the outcome is recorded").
public struct ExerciseRecord: Hashable, Sendable, Codable {
    public enum Outcome: String, Hashable, Sendable, Codable, CaseIterable {
        /// Done to the end, then the bypass went ahead.
        case completed
        /// Skipped (or `--skip-exercise`).
        case skipped
        /// Done, and the person decided not to open the entry after all.
        case bypassAvoided
    }

    public var exerciseID: String
    public var entry: EntryID
    public var time: Instant
    public var outcome: Outcome

    public init(exerciseID: String, entry: EntryID, time: Instant, outcome: Outcome) {
        self.exerciseID = exerciseID
        self.entry = entry
        self.time = time
        self.outcome = outcome
    }

    /// The event to store for this record.
    public var event: CreditEvent { CreditEvent(time: time, entry: entry, kind: .exercise(self)) }
}
