import ControlAPI
import Engine
import ScrollOffCore
import Store

// The credit and household answers on the wire, made from the engine's domain values at the edge
// (docs/architecture.md, Engine; WireAnswers.swift for the pattern). `package`, so a test can
// check the JSON names of exactly what the control server sends.

extension GrantResult {
    /// `use`, `peek` and `token`.
    package init(_ opened: OpenedGrant) {
        self.init(grant: GrantReport(opened.grant), plan: opened.plan.map(PlanReport.init), alternatives: opened.alternatives,
                  balanceSeconds: opened.balanceSeconds, peeksLeftToday: opened.peeksLeftToday, tokensLeftMonth: opened.tokensLeftMonth,
                  message: opened.message)
    }
}

extension StopResult {
    /// `stop`.
    package init(_ stopped: StoppedSpends) {
        self.init(stopped: stopped.stopped.map(GrantReport.init), balanceSeconds: stopped.balanceSeconds, message: stopped.message)
    }
}

extension BypassPreview {
    /// `GET /v1/bypass/next`: the ladder's step by its wire name, and a paid peek's cost.
    package init(_ outlook: BypassOutlook) {
        let step = switch outlook.step {
        case .freePeek: Self.freePeek
        case .paidPeek: Self.paidPeek
        case .tokenOnly: Self.tokenOnly
        }
        self.init(step: step, costSeconds: outlook.costSeconds, plan: outlook.plan.map(PlanReport.init), alternatives: outlook.alternatives,
                  peeksLeftToday: outlook.peeksLeftToday, tokensLeftMonth: outlook.tokensLeftMonth)
    }
}

extension PlanReport {
    /// A plan as `plan add`, `plan list` and the bypass answers show it: without its profile,
    /// which the caller named.
    package init(_ plan: Plan) {
        self.init(id: plan.id, when: plan.when, then: plan.then, archived: plan.archived, shownCount: plan.shownCount, created: plan.created)
    }
}

extension AdjustReport {
    /// `adjust`, and the adjustment of an approved request. The engine does not name the ledger
    /// row, so `ledger_id` stays null, as it always has.
    package init(_ adjustment: CreditAdjustment) {
        self.init(profile: adjustment.profile, seconds: adjustment.seconds, note: adjustment.note, balanceSeconds: adjustment.balanceSeconds,
                  ledgerID: nil, message: adjustment.message)
    }
}

extension TimeRequestInfo {
    /// A request for time as members and owners see it.
    package init(_ request: TimeRequest) {
        let status: Status = switch request.status {
        case .pending: .pending
        case .approved: .approved
        case .declined: .declined
        }
        self.init(id: request.id, profile: request.profile, seconds: request.seconds, note: request.note, status: status,
                  createdAt: request.created, answeredAt: request.answeredAt, answeredBy: request.answeredBy, answerNote: request.answerNote)
    }
}

extension TimeRequestAnswerReport {
    /// `requests approve|decline`.
    package init(_ answered: AnsweredTimeRequest) {
        self.init(request: TimeRequestInfo(answered.request), adjustment: answered.adjustment.map(AdjustReport.init), message: answered.message)
    }
}

extension GrantReport {
    /// A grant on the wire: in `use`, `peek`, `token` and `stop` answers, and in `status` and `wallet`.
    package init(_ g: Grant) {
        self.init(id: g.id, entry: g.entry.rawValue, kind: g.kind.rawValue, start: g.start, end: g.end, task: g.task)
    }
}
