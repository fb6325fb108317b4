import ControlAPI
import ScrollOffCore

extension HelperEngine {
    /// What `peek` or `token` would meet now (SPEC §5, §8), read-only: the next step of the ladder
    /// (the CLI offers the "try this first" exercise before any bypass, on a terminal), the
    /// plan that fits the moment (SPEC §8: time of day, weekday, and `entry` when given) and
    /// their alternatives, and what is left today. The plan is counted as shown here, once per
    /// bypass flow (`planShownAtPreview`); the grant that follows does not count it again.
    public func bypassPreview(profile: String = HelperEngine.defaultProfile, entry word: String? = nil) throws(EngineError) -> BypassPreview {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        let credit = p.account.status(at: now)
        let (step, cost): (String, Int64?) = switch p.account.ladder.nextStep(at: now, policy: p.account.policy) {
        case .freePeek: (BypassPreview.freePeek, nil)
        case .paidPeek(let seconds): (BypassPreview.paidPeek, seconds)
        case .tokenOnly: (BypassPreview.tokenOnly, nil)
        }
        // An entry that does not resolve only loses its say in the plan; the preview still answers.
        let entry = word.flatMap { w -> EntryID? in try? resolveOne(w) }
        let plan = planShownAtPreview(profile: profile, entry: entry, at: now).map(PlanReport.init)
        return BypassPreview(step: step, costSeconds: cost, plan: plan, alternatives: alternativeList(profile: profile).map(\.text),
                             peeksLeftToday: credit.peeksLeftToday, tokensLeftMonth: credit.tokensLeftThisMonth)
    }
}
