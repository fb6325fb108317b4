import ScrollOffCore

/// Everything one helper operation changed, applied by `Store.commit(_:anchor:)` in ONE
/// transaction, in order. Build it from the core's values; the store turns them into rows.
///
/// The usual shape for a wallet or ladder operation is `record(outcome, account:, profile:)`:
/// the new ledger rows, the events, the grants they opened or closed, and the account state
/// after the operation, so that the balance stays equal to the sum of the ledger (SPEC §4).
public struct StateChange: Sendable {
    public enum Operation: Sendable {
        case saveProfile(ProfileSettings)
        /// Deletes the profile and, by cascade, everything it owns (ledger and events included).
        case removeProfile(String)
        case saveEntry(profile: String, StoredEntry)
        case removeEntry(profile: String, EntryID)
        case saveBlock(profile: String, Block)
        case removeBlock(profile: String, EntryID)
        case saveSchedule(profile: String, Schedule)
        case removeSchedule(profile: String, name: String)
        case saveFocusSession(profile: String, FocusSession)
        /// Focus sessions cannot be ended early (SPEC §2); this only tidies one that is over.
        case removeFocusSession(profile: String, id: Int64)
        /// Appends a ledger row (SPEC §4). Its id is returned in `CommitReceipt.ledgerIDs`.
        case appendLedger(profile: String, LedgerRow)
        case appendEvent(StoredEvent)
        /// SPEC §12: a burst of refused attempts is counted in the row its first attempt wrote
        /// (`RefusalRecord.count`), so a script cannot grow the table without bound.
        case updateEventPayload(id: Int64, payload: String)
        /// Inserts or updates a grant; `ended` closes it with the instant and the reason.
        case saveGrant(profile: String, Grant, ended: GrantEnd?)
        /// The wallet and ladder state after the operation: replaces the stored one whole.
        case saveAccount(profile: String, CreditAccountState)
        case addPlan(profile: String, when: String, then: String, created: Instant)
        case archivePlan(id: Int64)
        /// SPEC §8: a peek or spend showed this plan first.
        case countPlanShown(id: Int64)
        case addAlternative(profile: String, text: String, created: Instant)
        case removeAlternative(id: Int64)
        case recordExercise(profile: String, ExerciseRecord)
        /// Protected time (SPEC §7): a block was in force over `[from, to)`; added to the daily
        /// totals of the profile's local days.
        case addProtectedTime(profile: String, from: Instant, to: Instant)
        /// A member asks for time (SPEC §9a); its id is returned in `CommitReceipt.timeRequestIDs`.
        case addTimeRequest(profile: String, seconds: Int64, note: String, created: Instant)
        /// An owner's answer to a pending request; refused by the store when it is not pending.
        case answerTimeRequest(id: Int64, status: TimeRequest.Status, at: Instant, by: String, note: String?)
        /// An owner's pause of a profile (SPEC §5a): replaces the one stored.
        case savePause(profile: String, Pause)
        /// `scrolloff resume`: the pause is lifted.
        case removePause(profile: String)
        /// An owner's daily allowance (SPEC §4a), by its entries: replaces the one stored for them.
        case saveAllowance(profile: String, Allowance)
        case removeAllowance(profile: String, entries: [EntryID])
        /// A helper-wide setting in force (`unknown_devices`), kept so a restart checks the next
        /// change against it.
        case saveSetting(key: String, value: String)
        /// A list the household has (`lists add`, or one carried in from a helper's files): each
        /// helper then downloads it. Replaces the record of the same name.
        case saveListSource(ListSource)
        /// `lists rm`: the list is gone for every helper (its held names with it); refused by the
        /// store when there is none.
        case removeListSource(name: String)
        /// The names of a list the household holds (SPEC §3), replacing its row whole: the engine
        /// decides the set (a union with what is held, or none when the lock ended) on the latest state.
        case saveHeldListNames(HeldListNames)
    }

    /// How a grant closed.
    public struct GrantEnd: Hashable, Sendable {
        public var at: Instant
        /// `CreditEvent.GrantEndReason` spelled as its raw value.
        public var reason: String
        public init(at: Instant, reason: String) {
            self.at = at
            self.reason = reason
        }
    }

    public var operations: [Operation]

    public init(_ operations: [Operation] = []) { self.operations = operations }

    public var isEmpty: Bool { operations.isEmpty }

    public mutating func append(_ operation: Operation) { operations.append(operation) }

    /// Adds what a wallet or ladder operation produced: its ledger rows, its events (and the grants
    /// and exercise records they carry), then the account state after it.
    public mutating func record(_ outcome: CreditOutcome, account: CreditAccountState, profile: String) {
        for row in outcome.rows { operations.append(.appendLedger(profile: profile, row)) }
        for event in outcome.events {
            operations.append(.appendEvent(StoredEvent(event, profile: profile)))
            switch event.kind {
            case .grantOpened(let g), .grantShortened(let g):
                operations.append(.saveGrant(profile: profile, g, ended: nil))
            case .grantEnded(let g, let reason):
                operations.append(.saveGrant(profile: profile, g, ended: GrantEnd(at: g.end, reason: reason.rawValue)))
            case .exercise(let record):
                operations.append(.recordExercise(profile: profile, record))
            default:
                break
            }
        }
        operations.append(.saveAccount(profile: profile, account))
    }
}

/// What a commit assigned, returned only after COMMIT succeeded.
public struct CommitReceipt: Hashable, Sendable {
    /// Ids of the appended ledger rows, in the order of the operations.
    public var ledgerIDs: [Int64] = []
    public var eventIDs: [Int64] = []
    public var planIDs: [Int64] = []
    public var alternativeIDs: [Int64] = []
    public var timeRequestIDs: [Int64] = []
}
