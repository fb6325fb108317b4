/// One change of balance (SPEC §4: "Every change of balance is a ledger row"). The wallet returns
/// rows from every operation; the helper appends them to the ledger table as they are.
///
/// Invariant kept by `Wallet`: the balance equals the sum of `deltaSeconds` over every row it has
/// returned, and it is never negative.
public struct LedgerRow: Hashable, Sendable, Codable {
    /// SPEC §4's reasons, spelled as in the ledger table and `export --csv`.
    public enum Reason: String, Hashable, Sendable, Codable, CaseIterable {
        /// A full earn unit (+300 s) for an hour of abstinence, always the whole unit. When the daily
        /// cap cuts it, a `capDiscard` row at the same instant takes the excess back out.
        case earn
        /// Credit used by a running `scrolloff use` grant, in whole seconds (negative).
        case spend
        /// A free peek: zero delta, recorded so the ledger tells the whole story of the day.
        case bypassFree
        /// A paid peek: minus its cost (60 s).
        case bypassCredit
        /// An emergency token: zero delta (tokens are counted per month, not paid in credit).
        case bypassToken
        /// A correction made by an administrator, positive or negative.
        case adjust
        /// The one-off starter credit (+120 s).
        case starter
        /// Earned credit reaching the end of its rollover (negative).
        case expire
        /// The part of an `earn` row above the daily cap (negative; `earn + capDiscard` is what
        /// was actually credited).
        case capDiscard
        /// An owner's daily allowance (SPEC §4a): granted at local midnight or when it is set
        /// (positive), taken back when it is lowered and what is left of it at the next midnight
        /// (negative; it never rolls over).
        case allowance
    }

    public var time: Instant
    /// Signed whole seconds; the balance is the sum of this column.
    public var deltaSeconds: Int64
    public var reason: Reason
    /// The entry the credit was spent on or earmarked for; nil for wallet-wide rows.
    public var entry: EntryID?
    /// Words for people (`"earned on 2026-11-21"`, `"over the daily cap of 45 min"`).
    public var note: String?

    public init(time: Instant, deltaSeconds: Int64, reason: Reason, entry: EntryID? = nil, note: String? = nil) {
        self.time = time
        self.deltaSeconds = deltaSeconds
        self.reason = reason
        self.entry = entry
        self.note = note
    }
}
