import ScrollOffCore

/// What the rules engine asks of the place its state lives (SPEC §3, §12), in the product's
/// own values: no SQL, no database handle. `Store` (SQLite, one file beside the helper) is the one
/// backend today; a second one (a server that two resolvers of one household share) conforms to
/// this and the engine does not change.
///
/// Every operation is synchronous and runs on the engine: the engine is the single writer, and a
/// command answers only after its change is durable (`commit`), so a backend must not acknowledge
/// a commit it could still lose.
///
/// The list is exactly what the engine and its `doctor` facts call, read off their calls; tools that
/// open the database themselves (`scrolloff-dns reset`, `clock reset`, the crash probe) keep using
/// `Store` directly.
public protocol StateStore: Sendable {
    /// Where the state lives, for the log and `doctor`: a file path, or a server's address.
    var location: String { get }

    /// Everything needed to rebuild the engine after a restart (`StoredState`).
    func load() throws(StoreError) -> StoredState
    /// Applies `change` and saves `anchor` atomically, and returns only once both are durable; a
    /// failure leaves nothing of the change behind.
    @discardableResult
    func commit(_ change: StateChange, anchor: ClockAnchor) throws(StoreError) -> CommitReceipt
    /// Rolls rows older than `days` local days into daily totals and deletes them, atomically.
    @discardableResult
    func applyRetention(now: Instant, days: Int) throws(StoreError) -> RetentionReport

    /// One profile's days, oldest first, for the insights (SPEC §7).
    func dailyTotals(profile: String) throws(StoreError) -> [DailyTotals]
    /// Writes `event` only if `key` was never marked for its profile, mark and event atomically.
    @discardableResult
    func recordOnce(key: String, event: StoredEvent) throws(StoreError) -> Bool
    /// Whether `key` is marked for `profile`.
    func isMarked(key: String, profile: String) throws(StoreError) -> Bool
    /// The newest event of `kind` for `profile`.
    func latestEvent(kind: EventKind, profile: String) throws(StoreError) -> StoredEvent?
    /// Events oldest first: since `since` (nil: all kept), of `profile` and the machine-wide ones
    /// (nil: every profile's), of `kinds` (nil: every kind).
    func events(since: Instant?, profile: String?, kinds: Set<EventKind>?) throws(StoreError) -> [StoredEvent]
    /// Events with a row id above `afterID`, by id, at most `limit`: of `profiles` and the
    /// machine-wide ones (nil: every profile's). Where a live reader resumes (the event stream).
    func events(afterID: Int64, profiles: Set<String>?, limit: Int) throws(StoreError) -> [StoredEvent]
    /// The highest event row id written so far; 0 when there is none. A new live reader starts there.
    func latestEventID() throws(StoreError) -> Int64

    /// The ledger and events as CSV (SPEC §12); nil `profiles` for every profile.
    func exportCSV(profiles: Set<String>?) throws(StoreError) -> String
    /// The same rows, as values.
    func exportRows(profiles: Set<String>?) throws(StoreError) -> [ExportRow]
    /// Per profile, whether the balance is the sum of its ledger (SPEC §4).
    func verifyLedger() throws(StoreError) -> [LedgerBalance]
    /// The backend's own consistency check for `doctor`; empty problems when sound.
    func integrityCheck() throws(StoreError) -> IntegrityReport
    /// Whether other helpers write the same state (a shared server): a commit may then be refused
    /// as stale, and a change the store refused must not be held to be written later.
    var isShared: Bool { get }
    /// This helper's name among those sharing the store (`[store] node`); empty when it keeps its
    /// state alone. Recorded with a list added through it (`ListSource.addedOn`).
    var nodeName: String { get }
    /// The names the household holds of list `name` (SPEC §3) with their summary; nil when it
    /// holds none and never did. Read apart from `load`: the names may run to megabytes, and a
    /// helper needs them only when their revision moved.
    func heldListNames(_ name: String) throws(StoreError) -> HeldListNames?
}

extension StateStore {
    public var isShared: Bool { false }
    public var nodeName: String { "" }
    /// A backend that keeps no held names (test doubles): none are held.
    public func heldListNames(_ name: String) throws(StoreError) -> HeldListNames? { nil }
}

extension Store: StateStore {
    public var location: String { path }
}

extension StateStore {
    /// For a backend without a query of its own: every kept event, filtered here.
    public func events(afterID: Int64, profiles: Set<String>?, limit: Int) throws(StoreError) -> [StoredEvent] {
        let all = try events(since: nil, profile: nil, kinds: nil)
        let after = all.filter { e in
            guard let id = e.id, id > afterID else { return false }
            guard let profiles, let profile = e.profile else { return true }
            return profiles.contains(profile)
        }.sorted { ($0.id ?? 0) < ($1.id ?? 0) }
        return Array(after.prefix(max(0, limit)))
    }

    public func latestEventID() throws(StoreError) -> Int64 {
        try events(since: nil, profile: nil, kinds: nil).compactMap(\.id).max() ?? 0
    }
}
