/// A lump of credit with one origin and one expiry. The wallet spends batches oldest first
/// (SPEC §4) and expires what is left of a batch at its `expiresAt`.
public struct CreditBatch: Hashable, Sendable, Codable {
    public enum Origin: Hashable, Sendable, Codable {
        /// Earned on this local day (SPEC §4 rollover counts from here).
        case earned(LocalCalendar.Day)
        /// The one-off starter credit: outside caps and rollover.
        case starter
        /// A positive administrator adjustment: kept like starter credit, without expiry.
        case adjustment
        /// An owner's daily allowance for this local day (SPEC §4a): spent first, gone at midnight.
        case allowance(LocalCalendar.Day)
    }

    public var origin: Origin
    /// The instant the batch was credited; orders batches oldest first.
    public var createdAt: Instant
    /// Local midnight at which what is left expires; nil = never (starter, adjustments). Fixed
    /// when the credit is earned: a later change of `rolloverDays` applies to new credit only.
    public var expiresAt: Instant?
    /// Whole seconds left, always > 0 while the batch is kept.
    public var remaining: Int64
    /// Per-entry wallet (SPEC §4): seconds set aside for this entry only; nil = the global wallet.
    public var earmark: EntryID?
    /// For an allowance batch, the key of its allowance (`Allowance.key`: the entries it may be
    /// spent on, `*` for any); nil for every other batch.
    public var allowanceKey: String?

    public init(origin: Origin, createdAt: Instant, expiresAt: Instant?, remaining: Int64, earmark: EntryID? = nil,
                allowanceKey: String? = nil) {
        self.origin = origin
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.remaining = remaining
        self.earmark = earmark
        self.allowanceKey = allowanceKey
    }

    /// Whether a spend on `entry` may draw on it as an allowance: only its allowance's entries may.
    public func allowanceCovers(_ entry: EntryID?) -> Bool {
        guard let allowanceKey else { return false }
        return Allowance.covers(key: allowanceKey, entry)
    }

    /// Spending order: dated (expiring) credit oldest first, then credit that never expires.
    /// Starter credit is the oldest of all, but spending it first would let dated credit expire
    /// unused, and "never expires" is what SPEC §4 promises for it; so it goes last.
    static func spendsBefore(_ a: CreditBatch, _ b: CreditBatch) -> Bool {
        switch (a.expiresAt == nil, b.expiresAt == nil) {
        case (false, true): return true
        case (true, false): return false
        default: return a.createdAt < b.createdAt
        }
    }
}
