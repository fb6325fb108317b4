import Foundation
import ScrollOffCore

/// One batch of credit in `wallet` (SPEC §4 rollover).
public struct BatchReport: Hashable, Sendable, Codable {
    /// `earned`, `starter` or `adjustment`.
    public var origin: String
    public var earnedOn: String?
    public var remainingSeconds: Int64
    @WireOptionalTime public var expiresAt: Instant?
    public var earmark: String?

    public init(origin: String, earnedOn: String?, remainingSeconds: Int64, expiresAt: Instant?, earmark: String?) {
        self.origin = origin
        self.earnedOn = earnedOn
        self.remainingSeconds = remainingSeconds
        self.expiresAt = expiresAt
        self.earmark = earmark
    }

    enum CodingKeys: String, CodingKey {
        case origin, earmark
        case earnedOn = "earned_on"
        case remainingSeconds = "remaining_seconds"
        case expiresAt = "expires_at"
    }
}

/// `scrolloff wallet` (SPEC §13 fields `balance_seconds`, `earned_today_seconds`, `spent_today_seconds`).
public struct WalletReport: Hashable, Sendable, Codable {
    public var profile: String
    public var balanceSeconds: Int64
    public var earnedTodaySeconds: Int64
    public var spentTodaySeconds: Int64
    public var batches: [BatchReport]
    @WireOptionalTime public var nextAwardAt: Instant?
    @WireOptionalTime public var earningFrozenUntil: Instant?
    public var grants: [GrantReport]
    /// The daily allowances (SPEC §4a) with what is left of each today; part of the balance.
    public var allowances: [AllowanceInfo]?
    /// The helper's trusted time when it answered (SPEC §11), so the CLI measures "until" and
    /// "today" against the helper's clock rather than its own. Nil from a helper that does not say.
    @WireOptionalTime public var now: Instant?

    public init(profile: String, balanceSeconds: Int64, earnedTodaySeconds: Int64, spentTodaySeconds: Int64, batches: [BatchReport],
                nextAwardAt: Instant?, earningFrozenUntil: Instant?, grants: [GrantReport], now: Instant? = nil) {
        self.profile = profile
        self.balanceSeconds = balanceSeconds
        self.earnedTodaySeconds = earnedTodaySeconds
        self.spentTodaySeconds = spentTodaySeconds
        self.batches = batches
        self.nextAwardAt = nextAwardAt
        self.earningFrozenUntil = earningFrozenUntil
        self.grants = grants
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case profile, batches, grants, now, allowances
        case balanceSeconds = "balance_seconds"
        case earnedTodaySeconds = "earned_today_seconds"
        case spentTodaySeconds = "spent_today_seconds"
        case nextAwardAt = "next_award_at"
        case earningFrozenUntil = "earning_frozen_until"
    }
}

/// What `use`, `peek` and `token` answer: the grant, and what SPEC §8 shows first.
public struct GrantResult: Hashable, Sendable, Codable {
    public var grant: GrantReport
    /// The person's own plan shown before the bypass (SPEC §8); its shown count went up by one.
    public var plan: PlanReport?
    /// Things to do instead (SPEC §8), newest first.
    public var alternatives: [String]
    public var balanceSeconds: Int64
    public var peeksLeftToday: Int
    public var tokensLeftMonth: Int
    /// Supportive, numbers-first words for the CLI.
    public var message: String

    public init(grant: GrantReport, plan: PlanReport?, alternatives: [String], balanceSeconds: Int64, peeksLeftToday: Int,
                tokensLeftMonth: Int, message: String) {
        self.grant = grant
        self.plan = plan
        self.alternatives = alternatives
        self.balanceSeconds = balanceSeconds
        self.peeksLeftToday = peeksLeftToday
        self.tokensLeftMonth = tokensLeftMonth
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case grant, plan, alternatives, message
        case balanceSeconds = "balance_seconds"
        case peeksLeftToday = "peeks_left_today"
        case tokensLeftMonth = "tokens_left_month"
    }
}

/// `stop`.
public struct StopResult: Hashable, Sendable, Codable {
    public var stopped: [GrantReport]
    public var balanceSeconds: Int64
    public var message: String

    public init(stopped: [GrantReport], balanceSeconds: Int64, message: String) {
        self.stopped = stopped
        self.balanceSeconds = balanceSeconds
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case stopped, message
        case balanceSeconds = "balance_seconds"
    }
}

/// `GET /v1/bypass/next`: what the peek ladder would do now (SPEC §5), so the CLI offers the
/// exercise before a paid step only, and the plan and alternatives the person wrote (SPEC §8),
/// shown before anything opens.
public struct BypassPreview: Hashable, Sendable, Codable {
    /// `free_peek`, `paid_peek` or `token_only`.
    public var step: String
    /// The cost of a paid peek, in seconds of credit.
    public var costSeconds: Int64?
    public var plan: PlanReport?
    public var alternatives: [String]
    public var peeksLeftToday: Int
    public var tokensLeftMonth: Int

    public static let freePeek = "free_peek"
    public static let paidPeek = "paid_peek"
    public static let tokenOnly = "token_only"

    public init(step: String, costSeconds: Int64?, plan: PlanReport?, alternatives: [String], peeksLeftToday: Int, tokensLeftMonth: Int) {
        self.step = step
        self.costSeconds = costSeconds
        self.plan = plan
        self.alternatives = alternatives
        self.peeksLeftToday = peeksLeftToday
        self.tokensLeftMonth = tokensLeftMonth
    }

    enum CodingKeys: String, CodingKey {
        case step, plan, alternatives
        case costSeconds = "cost_seconds"
        case peeksLeftToday = "peeks_left_today"
        case tokensLeftMonth = "tokens_left_month"
    }
}
