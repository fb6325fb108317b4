/// The three starting points of SPEC §6. A preset only chooses default knob values; every knob can
/// still be overridden on its own (`Knobs.resolve(preset:overrides:)`).
public enum Preset: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The default: the longest cooldown and the smallest earn cap; credit lasts until midnight.
    case strict
    case balanced
    case flexible

    /// The preset used when the configuration names none (SPEC §6: strict is the default).
    public static let `default`: Preset = .strict

    /// The knob values of the SPEC §6 table for this preset. Knobs the table does not list
    /// (peek length, paid peeks, token length, earn unit, starter credit) are the same in every
    /// preset and come from SPEC §4 and §5.
    public var knobs: Knobs {
        switch self {
        case .strict:
            Knobs(cooldown: .hours(2), dailyEarnCap: .minutes(45), rolloverDays: 0,
                  freePeeksPerDay: 1, includedTokensPerMonth: 0, perEntryWallets: false)
        case .balanced:
            Knobs(cooldown: .hours(1), dailyEarnCap: .minutes(90), rolloverDays: 3,
                  freePeeksPerDay: 2, includedTokensPerMonth: 0, perEntryWallets: false)
        case .flexible:
            Knobs(cooldown: .minutes(30), dailyEarnCap: .minutes(120), rolloverDays: 7,
                  freePeeksPerDay: 2, includedTokensPerMonth: 3, perEntryWallets: true)
        }
    }

    public var description: String { rawValue }
}
