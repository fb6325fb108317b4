import ControlAPI
import ScrollOffCore

/// How `use`, `peek` and `token` answer: the person's plan first (SPEC §8), then what opened,
/// until when, and what is left. On a terminal the plan was already printed before the request
/// (`BypassFlow.showPlanFirst`); otherwise the answer's plan leads the output.
enum GrantWords {
    static func print(_ result: GrantResult, planShown: Bool) {
        if !planShown, let plan = result.plan { PlanWords.printPlan(plan) }
        if !planShown, !result.alternatives.isEmpty { PlanWords.printAlternatives(result.alternatives) }
        let grant = result.grant
        // The grant has just started: count from its start, on the helper's clock.
        let now = grant.start
        // `result.message` says the same in the engine's words; it is in `--json` for scripts.
        let task = grant.task.map { " · task “\($0)”" } ?? ""
        Swift.print("\(Terminal.bold(grant.entry)) is open until \(TimeWords.until(grant.end, now: now))\(task)")
        Swift.print("Balance \(TimeWords.balance(seconds: result.balanceSeconds)) · \(Plural.count(result.peeksLeftToday, "peek")) left today · "
            + "\(Plural.count(result.tokensLeftMonth, "token")) left this month")
    }
}

/// The person's own words shown at a bypass (SPEC §8).
enum PlanWords {
    static func printPlan(_ plan: PlanReport) {
        Swift.print(Terminal.bold("Your plan: ") + "when \(plan.when), \(plan.then).")
    }

    static func printAlternatives(_ alternatives: [String]) {
        Swift.print("Instead, you could: " + alternatives.prefix(3).joined(separator: " · "))
    }
}
