/// The persisted part of a profile's wallet: plain values, `Codable`, so the helper can save it
/// with every commit and rebuild a `Wallet` from it and the current `CreditPolicy`.
public struct WalletState: Hashable, Sendable, Codable {
    /// The spend grant currently deducting credit (at most one per profile; see `Wallet.use`).
    public struct RunningSpend: Hashable, Sendable, Codable {
        public var grantID: Int64
        public var entry: EntryID
        /// Elapsed time up to here has been charged (or carried, see `unchargedMilliseconds`).
        public var settledThrough: Instant
        /// `--for`: the instant the person asked it to end; nil = until the credit runs out.
        public var limitEnd: Instant?
    }

    /// Everything before this instant has been processed. Operations at earlier instants are
    /// treated as happening now: trusted time does not run backwards (SPEC §11).
    public var asOf: Instant
    /// Credit, in spending order (`CreditBatch.spendsBefore`).
    public var batches: [CreditBatch] = []
    public var starterGranted = false

    /// The last "is a block in force for this profile" reported by the rules side.
    public var blockInForce = false
    /// Start of the current run of abstinence, or of the hour after the last award. May lie in the
    /// future while a grant is in use or earning is frozen; nil while no block is in force.
    public var streakStart: Instant?
    /// SPEC §11: no earning before this instant (set after a clock jump back).
    public var frozenUntil: Instant?

    /// Grants of every kind that have not ended yet; any of them means "not abstinent".
    public var grantsInUse: [Grant] = []
    public var spend: RunningSpend?
    /// Time used by spends that is shorter than a whole second and not charged yet (0..<1000).
    /// See `Wallet.use` for the rule.
    public var unchargedMilliseconds: Int64 = 0
    public var nextGrantID: Int64 = 1

    /// The local day the counters below belong to.
    public var day: LocalCalendar.Day?
    /// Credit added today by `earn` rows after the cap (what the cap compares against).
    public var earnedToday: Int64 = 0
    /// Credit spent today by spends and paid peeks.
    public var spentToday: Int64 = 0
    /// Credit spent today by spends, per entry (the SPEC §4 per-entry daily spend cap).
    public var spentTodayByEntry: [EntryID: Int64] = [:]

    /// The local day the allowance grants below belong to (SPEC §4a).
    public var allowanceDay: LocalCalendar.Day?
    /// Seconds granted on `allowanceDay` per allowance key: a change of the allowance that day
    /// grants or takes back the difference only, so a day never grants twice.
    public var allowanceGranted: [String: Int64] = [:]

    /// A new, empty wallet; `asOf` is the first trusted instant the helper knows.
    public init(asOf: Instant) { self.asOf = asOf }
}
