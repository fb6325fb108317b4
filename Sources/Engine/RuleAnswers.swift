import DomainLists
import ScrollOffCore
import Store

// What the rules commands answer, as the engine's own values: the control server and the household
// page make the control API's wire types from them at the edge (Sources/ControlServer/WireAnswers+Rules.swift).

/// One entry as `block`, `unblock` and `status` see it: what the rules say now (`EntryStatus`) and
/// until when a weakening is refused (the cooldown, a curfew's edit lock, a focus session).
public struct EntryReading: Hashable, Sendable {
    public var status: EntryStatus
    public var lockedUntil: Instant?
    /// Seconds of today's daily allowance left for it (SPEC §4a); nil when none covers it today.
    public var allowanceLeftSeconds: Int64?
    /// Whether a block around the clock names it (what `unblock` removes).
    public var aroundTheClock: Bool
    /// The bypass lockout's end (SPEC §5): no peek or token opens it before.
    public var bypassRestsUntil: Instant?

    public var id: EntryID { status.entry }

    public init(
        status: EntryStatus, lockedUntil: Instant?, allowanceLeftSeconds: Int64? = nil, aroundTheClock: Bool = false,
        bypassRestsUntil: Instant? = nil
    ) {
        self.status = status
        self.lockedUntil = lockedUntil
        self.allowanceLeftSeconds = allowanceLeftSeconds
        self.aroundTheClock = aroundTheClock
        self.bypassRestsUntil = bypassRestsUntil
    }
}

/// What `block` and `unblock` changed: the entries as they are now, and the sentence to say.
public struct BlockOutcome: Hashable, Sendable {
    public var entries: [EntryReading]
    public var message: String
    /// The engine's trusted now when it answered.
    public var now: Instant
}

/// A schedule as `schedule add` and `schedule list` answer it, with its lock at `now`.
public struct ScheduleReading: Hashable, Sendable {
    public var schedule: Schedule
    /// The later of the curfew edit lock (SPEC §2) and the cooldown (SPEC §3); nil when neither runs.
    public var lockedUntil: Instant?
    public var now: Instant

    init(_ s: Schedule, at t: Instant) {
        schedule = s
        let lock = ChangeRules.curfewEditLock(of: s, at: t)
        let cooldown = s.cooldownUntil.flatMap { $0 > t ? $0 : nil }
        lockedUntil = [lock, cooldown].compactMap { $0 }.max()
        now = t
    }
}

/// A catalog service and its state in the asking profile (`scrolloff services`).
public struct ServiceReading: Equatable, Sendable {
    public var service: CatalogService
    public var state: EntryState.Kind
}

// MARK: Reports

/// `scrolloff status` (SPEC §13) as the engine sees it: every entry the profile names with its
/// state and lock, the wallet's numbers (peeks and tokens left, balance, grants running), focus
/// sessions running, a strict curfew in force, and the requests for time of the last 7 days.
public struct ProfileStatus: Hashable, Sendable {
    public var profile: String
    public var now: Instant
    /// Entries with a rule left (an entry whose rules are all gone has nothing to report).
    public var entries: [EntryReading]
    public var credit: CreditStatus
    /// The end of a strict curfew in force (every name but the allow list blocked).
    public var strictCurfewUntil: Instant?
    /// Focus sessions running now, soonest end first.
    public var focus: [FocusSession]
    /// Pending or answered in the last 7 days (SPEC §9a), newest first.
    public var requests: [TimeRequest]
    /// An owner's pause in force (SPEC §5a).
    public var pause: Pause? = nil
    /// The daily allowances (SPEC §4a) with what is left of each today.
    public var allowances: [AllowanceReading] = []
}

/// `scrolloff wallet` (SPEC §4, §13): the wallet's numbers and its batches, to the second.
public struct WalletReading: Hashable, Sendable {
    public var profile: String
    public var credit: CreditStatus
    public var batches: [CreditBatch]
    public var now: Instant
    /// The daily allowances (SPEC §4a) with what is left of each today.
    public var allowances: [AllowanceReading] = []
}
