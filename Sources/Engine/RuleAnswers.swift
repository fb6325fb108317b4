import DomainLists
import ScrollOffCore

// What the rules commands answer, as the engine's own values: the control server and the household
// page make the control API's wire types from them at the edge (Sources/ControlServer/WireAnswers+Rules.swift).

/// One entry as `block`, `unblock` and `status` see it: what the rules say now (`EntryStatus`) and
/// until when a weakening is refused (the cooldown, a curfew's edit lock, a focus session).
public struct EntryReading: Hashable, Sendable {
    public var status: EntryStatus
    public var lockedUntil: Instant?

    public var id: EntryID { status.entry }

    public init(status: EntryStatus, lockedUntil: Instant?) {
        self.status = status
        self.lockedUntil = lockedUntil
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
