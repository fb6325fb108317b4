/// Knobs set on their own in the configuration, on top of a preset (SPEC §6). A nil field keeps
/// the preset's value.
public struct KnobOverrides: Hashable, Sendable, Codable {
    public var cooldown: Span?
    public var dailyEarnCap: Span?
    public var rolloverDays: Int?
    public var freePeeksPerDay: Int?
    public var paidPeeksPerDay: Int?
    public var paidPeekCost: Span?
    public var peekLength: Span?
    public var includedTokensPerMonth: Int?
    public var tokenLength: Span?
    public var earnAmount: Span?
    public var earnInterval: Span?
    public var starterCredit: Span?
    public var perEntryWallets: Bool?
    /// `.zero` turns the cap off; any other value sets it.
    public var perEntryDailySpendCap: Span?

    public init(
        cooldown: Span? = nil, dailyEarnCap: Span? = nil, rolloverDays: Int? = nil,
        freePeeksPerDay: Int? = nil, paidPeeksPerDay: Int? = nil, paidPeekCost: Span? = nil,
        peekLength: Span? = nil, includedTokensPerMonth: Int? = nil, tokenLength: Span? = nil,
        earnAmount: Span? = nil, earnInterval: Span? = nil, starterCredit: Span? = nil,
        perEntryWallets: Bool? = nil, perEntryDailySpendCap: Span? = nil
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
}
