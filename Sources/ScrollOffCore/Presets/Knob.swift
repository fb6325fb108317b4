/// The name of one configuration knob, as written in `scrolloff.toml` and shown in errors.
/// SPEC §6: "Every knob can also be set on its own in the configuration."
public enum Knob: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case cooldown = "cooldown"
    case dailyEarnCap = "daily_earn_cap"
    case rolloverDays = "rollover_days"
    case freePeeksPerDay = "free_peeks_per_day"
    case paidPeeksPerDay = "paid_peeks_per_day"
    case paidPeekCost = "paid_peek_cost"
    case peekLength = "peek_length"
    case includedTokensPerMonth = "tokens_per_month"
    case tokenLength = "token_length"
    case earnAmount = "earn_amount"
    case earnInterval = "earn_interval"
    case starterCredit = "starter_credit"
    case perEntryWallets = "per_entry_wallets"
    case perEntryDailySpendCap = "per_entry_daily_spend_cap"

    /// The configuration key.
    public var description: String { rawValue }

    /// The allowed values, in words, for error messages and `check-config`.
    ///
    /// Why these bounds: lengths of time are whole seconds because the ledger counts whole seconds
    /// (SPEC §4); the token allowance is capped at 5 by SPEC §5; the other upper bounds keep a typo
    /// (`daily_earn_cap = 4500` meaning 45 min) from silently turning the rules off.
    public var allowedRange: String {
        switch self {
        case .cooldown: "5 min to 7 days, in whole seconds"
        case .dailyEarnCap: "0 s (no earning) to 24 h, in whole seconds"
        case .rolloverDays: "0 (same day) to 30 days"
        case .freePeeksPerDay: "0 to 10"
        case .paidPeeksPerDay: "0 to 10"
        case .paidPeekCost: "1 s to 30 min, in whole seconds"
        case .peekLength: "10 s to 10 min, in whole seconds"
        case .includedTokensPerMonth: "0 to 5 (SPEC caps tokens at 5 a month)"
        case .tokenLength: "1 min to 60 min, in whole seconds"
        case .earnAmount: "1 s to 60 min, in whole seconds"
        case .earnInterval: "1 min to 24 h, in whole seconds"
        case .starterCredit: "0 s to 60 min, in whole seconds"
        case .perEntryWallets: "true or false"
        case .perEntryDailySpendCap: "none (0) or 1 min to 24 h, in whole seconds"
        }
    }
}

/// A knob set outside its allowed range. The message names the knob, the value and the range, so
/// `check-config` can print it as is.
public struct KnobError: Error, Hashable, Sendable, CustomStringConvertible {
    public var knob: Knob
    /// The rejected value as the person would write it (`"30 h"`, `"6"`).
    public var value: String
    public var allowed: String { knob.allowedRange }

    public init(knob: Knob, value: String) {
        self.knob = knob
        self.value = value
    }

    public var description: String {
        "\(knob) is \(value), but it must be \(allowed). Change \(knob) in the configuration and reload."
    }
}
