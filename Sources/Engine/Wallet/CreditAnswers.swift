import ScrollOffCore
import Store

// What the credit verbs answer, as the engine's own values: the control server and the
// household page make their wire types or pages from them (docs/architecture.md, Engine).

/// What `use`, `peek` and `token` answer: the grant that opened, and what SPEC §8 shows first.
public struct OpenedGrant: Hashable, Sendable {
    public var grant: Grant
    /// The person's own plan shown before the bypass (SPEC §8), with its shown count as counted.
    public var plan: Plan?
    /// Things to do instead (SPEC §8), newest first.
    public var alternatives: [String]
    public var balanceSeconds: Int64
    public var peeksLeftToday: Int
    public var tokensLeftMonth: Int
    /// Supportive, numbers-first words.
    public var message: String

    public init(grant: Grant, plan: Plan?, alternatives: [String], balanceSeconds: Int64, peeksLeftToday: Int, tokensLeftMonth: Int,
                message: String) {
        self.grant = grant
        self.plan = plan
        self.alternatives = alternatives
        self.balanceSeconds = balanceSeconds
        self.peeksLeftToday = peeksLeftToday
        self.tokensLeftMonth = tokensLeftMonth
        self.message = message
    }
}

/// What `stop` answers: the spends it ended and the balance after them.
public struct StoppedSpends: Hashable, Sendable {
    public var stopped: [Grant]
    public var balanceSeconds: Int64
    public var message: String

    public init(stopped: [Grant], balanceSeconds: Int64, message: String) {
        self.stopped = stopped
        self.balanceSeconds = balanceSeconds
        self.message = message
    }
}

/// What a bypass would meet now (SPEC §5, §8), read-only: the ladder's next step, the plan that
/// fits the moment and the alternatives, and what is left.
public struct BypassOutlook: Hashable, Sendable {
    public var step: BypassStep
    public var plan: Plan?
    public var alternatives: [String]
    public var peeksLeftToday: Int
    public var tokensLeftMonth: Int
    /// The profile's plans not archived: with `plan` nil, some may exist that fit another moment.
    public var plansOnFile: Int

    public init(step: BypassStep, plan: Plan?, alternatives: [String], peeksLeftToday: Int, tokensLeftMonth: Int, plansOnFile: Int = 0) {
        self.plansOnFile = plansOnFile
        self.step = step
        self.plan = plan
        self.alternatives = alternatives
        self.peeksLeftToday = peeksLeftToday
        self.tokensLeftMonth = tokensLeftMonth
    }

    /// The cost of the next peek in seconds of credit, when it is a paid one.
    public var costSeconds: Int64? {
        if case .paidPeek(let cost) = step { cost } else { nil }
    }
}
