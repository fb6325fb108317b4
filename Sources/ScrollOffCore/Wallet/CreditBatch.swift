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

    public init(origin: Origin, createdAt: Instant, expiresAt: Instant?, remaining: Int64, earmark: EntryID? = nil) {
        self.origin = origin
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.remaining = remaining
        self.earmark = earmark
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
