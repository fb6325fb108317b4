import ArgumentParser
import ControlAPI
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

/// The shared path of `peek` and `token` (SPEC §5): on a terminal, before any paid bypass (a paid
/// peek or a token), the plan and alternatives are shown and a short exercise is offered; its
/// outcome is recorded through the API. Without a terminal (scripts, pipes, `--json`) it is never
/// offered and nothing is recorded for it.
struct BypassFlow {
    enum Kind: String {
        case peek, token
    }

    var kind: Kind
    var entry: String
    var task: String?
    var skipExercise: Bool
    var options: GlobalOptions

    /// Both ends are a terminal: someone is there to do the exercise.
    static var interactive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    func run() throws {
        var planShown = false
        if Self.interactive && !options.json {
            let preview = try options.get(BypassPreview.self, "/v1/bypass/next")
            let paid = kind == .token || preview.step != BypassPreview.freePeek
            if paid {
                if let plan = preview.plan { PlanWords.printPlan(plan) }
                if !preview.alternatives.isEmpty { PlanWords.printAlternatives(preview.alternatives) }
                planShown = true
                let exercise = ExerciseRunner.choose()
                let outcome = skipExercise ? ExerciseRecord.Outcome.skipped : ExerciseRunner.offer(exercise, entry: entry)
                _ = try options.send(DoneResponse.self, "POST", "/v1/exercises",
                                     ExerciseOutcomeRequest(exercise: exercise.id, entry: entry, outcome: outcome.rawValue))
                if outcome == .bypassAvoided {
                    print("Well done. \(entry) stays blocked, and your \(kind == .token ? "token" : "peek") is still there if you need it.")
                    return
                }
            }
        }
        let answer = try options.send(GrantResult.self, "POST", "/v1/\(kind.rawValue)", GrantRequest(entry: entry, task: task))
        options.emit(answer) { GrantWords.print(answer, planShown: planShown) }
    }
}
