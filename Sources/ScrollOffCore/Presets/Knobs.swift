/// Every tunable number of the wallet, the bypass ladder and cooldowns (SPEC §4, §5, §6), after a
/// preset and the configuration's own overrides have been combined.
///
/// Build one with `Knobs.resolve(preset:overrides:)`, which validates; the memberwise initializer
/// exists for presets and tests and does not validate (call `validate()`).
public struct Knobs: Hashable, Sendable, Codable {
    /// SPEC §3: how long a new block or schedule cannot be weakened.
    public var cooldown: Span
    /// SPEC §4: most earned credit per local day; awards beyond it are discarded (`capDiscard`).
    public var dailyEarnCap: Span
    /// SPEC §4: extra local days earned credit lives; 0 = it expires at the next local midnight.
    public var rolloverDays: Int
    /// SPEC §5 step 1: free peeks per local day.
    public var freePeeksPerDay: Int
    /// SPEC §5 step 2: peeks per local day that cost `paidPeekCost` each, after the free ones.
    public var paidPeeksPerDay: Int
    /// SPEC §5 step 2: what one paid peek costs (60 s).
    public var paidPeekCost: Span
    /// SPEC §5: how long a peek opens the entry (60 s).
    public var peekLength: Span
    /// SPEC §5 step 4 and §6: tokens available per calendar month; never more than 5.
    public var includedTokensPerMonth: Int
    /// SPEC §5 step 4: how long a token opens the entry (10 min).
    public var tokenLength: Span
    /// SPEC §4: credit awarded per `earnInterval` of abstinence (5 min).
    public var earnAmount: Span
    /// SPEC §4: consecutive abstinence needed for one award (60 min).
    public var earnInterval: Span
    /// SPEC §4: one-off credit at first setup (2 min), outside caps and rollover.
    public var starterCredit: Span
    /// SPEC §4 and §6: whether credit can be earmarked for one entry.
    public var perEntryWallets: Bool
    /// SPEC §4: most credit spent on one entry per local day; nil = no cap.
    public var perEntryDailySpendCap: Span?

    /// The hard ceiling on tokens per calendar month (SPEC §5 step 4).
    public static let tokenMonthlyCeiling = 5

    public init(
        cooldown: Span, dailyEarnCap: Span, rolloverDays: Int, freePeeksPerDay: Int,
        includedTokensPerMonth: Int, perEntryWallets: Bool,
        paidPeeksPerDay: Int = 2, paidPeekCost: Span = .seconds(60), peekLength: Span = .seconds(60),
        tokenLength: Span = .minutes(10), earnAmount: Span = .seconds(300), earnInterval: Span = .minutes(60),
        starterCredit: Span = .seconds(120), perEntryDailySpendCap: Span? = nil
    ) {
        self.cooldown = cooldown
        self.dailyEarnCap = dailyEarnCap
        self.rolloverDays = rolloverDays
        self.freePeeksPerDay = freePeeksPerDay
        self.paidPeeksPerDay = paidPeeksPerDay
        self.paidPeekCost = paidPeekCost
        self.peekLength = peekLength
        self.includedTokensPerMonth = includedTokensPerMonth
        self.tokenLength = tokenLength
        self.earnAmount = earnAmount
        self.earnInterval = earnInterval
        self.starterCredit = starterCredit
        self.perEntryWallets = perEntryWallets
        self.perEntryDailySpendCap = perEntryDailySpendCap
    }

    /// The preset's knobs with each override applied, then validated.
    /// - Throws: `KnobError` for the first knob (in `Knob.allCases` order) outside its range.
    public static func resolve(preset: Preset, overrides: KnobOverrides = KnobOverrides()) throws(KnobError) -> Knobs {
        var k = preset.knobs
        if let v = overrides.cooldown { k.cooldown = v }
        if let v = overrides.dailyEarnCap { k.dailyEarnCap = v }
        if let v = overrides.rolloverDays { k.rolloverDays = v }
        if let v = overrides.freePeeksPerDay { k.freePeeksPerDay = v }
        if let v = overrides.paidPeeksPerDay { k.paidPeeksPerDay = v }
        if let v = overrides.paidPeekCost { k.paidPeekCost = v }
        if let v = overrides.peekLength { k.peekLength = v }
        if let v = overrides.includedTokensPerMonth { k.includedTokensPerMonth = v }
        if let v = overrides.tokenLength { k.tokenLength = v }
        if let v = overrides.earnAmount { k.earnAmount = v }
        if let v = overrides.earnInterval { k.earnInterval = v }
        if let v = overrides.starterCredit { k.starterCredit = v }
        if let v = overrides.perEntryWallets { k.perEntryWallets = v }
        if let v = overrides.perEntryDailySpendCap { k.perEntryDailySpendCap = v == .zero ? nil : v }
        try k.validate()
        return k
    }

    /// Checks every knob against `Knob.allowedRange`.
    public func validate() throws(KnobError) {
        try Self.check(.cooldown, cooldown, .minutes(5) ... .hours(24 * 7))
        try Self.check(.dailyEarnCap, dailyEarnCap, .zero ... .hours(24))
        try Self.check(.rolloverDays, rolloverDays, 0 ... 30)
        try Self.check(.freePeeksPerDay, freePeeksPerDay, 0 ... 10)
        try Self.check(.paidPeeksPerDay, paidPeeksPerDay, 0 ... 10)
        try Self.check(.paidPeekCost, paidPeekCost, .seconds(1) ... .minutes(30))
        try Self.check(.peekLength, peekLength, .seconds(10) ... .minutes(10))
        try Self.check(.includedTokensPerMonth, includedTokensPerMonth, 0 ... Self.tokenMonthlyCeiling)
        try Self.check(.tokenLength, tokenLength, .minutes(1) ... .minutes(60))
        try Self.check(.earnAmount, earnAmount, .seconds(1) ... .minutes(60))
        try Self.check(.earnInterval, earnInterval, .minutes(1) ... .hours(24))
        try Self.check(.starterCredit, starterCredit, .zero ... .minutes(60))
        if let cap = perEntryDailySpendCap {
            try Self.check(.perEntryDailySpendCap, cap, .minutes(1) ... .hours(24))
        }
    }

    private static func check(_ knob: Knob, _ value: Span, _ range: ClosedRange<Span>) throws(KnobError) {
        guard range.contains(value), value.milliseconds % 1000 == 0 else {
            throw KnobError(knob: knob, value: exactWords(value))
        }
    }

    /// The value exactly as set: an error must not round the number it complains about. Uses the
    /// usual words when they are exact (rounding down and up agree), else plain (decimal) seconds.
    static func exactWords(_ value: Span) -> String {
        let ms = value.milliseconds
        if ms % 1000 == 0 {
            let words = SpanWords.describe(value)
            return words == SpanWords.describe(value, rounding: .up) ? words : "\(ms / 1000) s"
        }
        let sign = ms < 0 ? "-" : ""
        let magnitude = ms.magnitude
        var fraction = String(magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(magnitude / 1000).\(fraction) s"
    }

    private static func check(_ knob: Knob, _ value: Int, _ range: ClosedRange<Int>) throws(KnobError) {
        guard range.contains(value) else { throw KnobError(knob: knob, value: String(value)) }
    }
}
