import ControlAPI
import Foundation
import ScrollOffCore

/// The "try this first" exercise in the terminal (SPEC §5 step 3): its steps one by one with
/// timed pauses, skippable at the start, then the question whether to go ahead.
enum ExerciseRunner {
    /// A different exercise each day, the same all day, so it becomes familiar.
    static func choose(now: Date = Date()) -> Exercise { Exercise.ofTheDay(now) }

    /// Runs the exercise and says how it went. Reads answers from stdin (a terminal).
    static func offer(_ exercise: Exercise, entry: String) -> ExerciseRecord.Outcome {
        let minutes = max(1, exercise.duration.milliseconds / 60_000)
        print("Before you open \(entry), try this first: \(Terminal.bold(exercise.title)) (\(minutes) min).")
        print("Press Enter to begin, or type s and Enter to skip.")
        let start = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased()
        if start == nil || start == "s" || start == "skip" { return .skipped }
        // The pauses share the exercise's length evenly, so the whole takes what the title says.
        let pause = Double(exercise.duration.milliseconds) / 1000 / Double(max(1, exercise.steps.count))
        for (index, step) in exercise.steps.enumerated() {
            print(Terminal.dim("\(index + 1)/\(exercise.steps.count)") + " " + step)
            Thread.sleep(forTimeInterval: pause)
        }
        print("Still want to open \(entry)? [y/N]")
        let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased()
        return answer == "y" || answer == "yes" ? .completed : .bypassAvoided
    }
}
