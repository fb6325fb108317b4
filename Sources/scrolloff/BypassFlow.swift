import ArgumentParser
import ControlAPI
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

/// The shared path of `peek` and `token` (SPEC §5): on a terminal the plan and alternatives are
/// shown before anything opens (SPEC §8), and before any paid bypass (a paid peek or a token) a
/// short exercise is offered; its outcome is recorded through the API. Without a terminal
/// (scripts, pipes, `--json`) it is never offered and nothing is recorded for it.
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

    /// SPEC §8: "a peek or a spend shows the person's matching plan first". On a terminal the plan
    /// and alternatives are fetched and printed before the bypass is asked for, so they are read at
    /// the moment of the urge, even when the bypass is then refused. Returns the preview, or nil
    /// when nobody is at a terminal (the answer's own plan is printed with it then).
    static func showPlanFirst(_ options: GlobalOptions, entry: String) throws -> BypassPreview? {
        guard interactive && !options.json else { return nil }
        // The entry lets the helper pick the plan whose trigger fits this moment (SPEC §8).
        let preview = try options.call(ControlEndpoints.bypassPreview, query: [(ControlQuery.entry, entry)])
        if let plan = preview.plan { PlanWords.printPlan(plan) }
        if !preview.alternatives.isEmpty { PlanWords.printAlternatives(preview.alternatives) }
        return preview
    }

    func run() throws {
        let preview = try Self.showPlanFirst(options, entry: entry)
        if let preview {
            let paid = kind == .token || preview.step != BypassPreview.freePeek
            if paid {
                let exercise = ExerciseRunner.choose()
                let outcome = skipExercise ? ExerciseRecord.Outcome.skipped : ExerciseRunner.offer(exercise, entry: entry)
                _ = try options.call(ControlEndpoints.recordExercise,
                                     ExerciseOutcomeRequest(exercise: exercise.id, entry: entry, outcome: outcome.rawValue))
                if outcome == .bypassAvoided {
                    print("Well done. \(entry) stays blocked, and your \(kind == .token ? "token" : "peek") is still there if you need it.")
                    return
                }
            }
        }
        let answer = try options.call(kind == .peek ? ControlEndpoints.peek : ControlEndpoints.token, GrantRequest(entry: entry, task: task))
        options.emit(answer) { GrantWords.print(answer, planShown: preview != nil) }
    }
}
