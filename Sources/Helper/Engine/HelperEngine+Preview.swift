import ControlAPI
import ScrollOffCore

extension HelperEngine {
    /// What `peek` or `token` would meet now (SPEC §5, §8), read-only: the next step of the ladder
    /// (the CLI offers the "try this first" exercise before any bypass, on a terminal), the
    /// person's newest active plan and their alternatives, and what is left today. Nothing is
    /// counted as shown here; the grant's answer does that.
    public func bypassPreview(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> BypassPreview {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        let credit = p.account.status(at: now)
        let (step, cost): (String, Int64?) = switch p.account.ladder.nextStep(at: now, policy: p.account.policy) {
        case .freePeek: (BypassPreview.freePeek, nil)
        case .paidPeek(let seconds): (BypassPreview.paidPeek, seconds)
        case .tokenOnly: (BypassPreview.tokenOnly, nil)
        }
        let plan = activePlan(profile: profile).map(PlanReport.init)
        return BypassPreview(step: step, costSeconds: cost, plan: plan, alternatives: alternativeList(profile: profile).map(\.text),
                             peeksLeftToday: credit.peeksLeftToday, tokensLeftMonth: credit.tokensLeftThisMonth)
    }
}
