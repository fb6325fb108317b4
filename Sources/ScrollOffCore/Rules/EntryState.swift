/// What the rules say about one entry at one instant (SPEC §2, §13 `status` → `entries[].state`).
public enum EntryState: Hashable, Sendable, Codable {
    /// The profile has no rule for this entry: its names are not managed.
    case none
    /// The entry has schedules, but none is in force now: not blocked.
    case scheduled
    /// Blocked around the clock, by an active block window or by a focus session.
    case blocked
    /// Blocked, but a grant (spend, peek, token) has opened it until `until`.
    case open(until: Instant)
    /// A curfew covers it now: nothing opens it.
    case curfew

    /// The state without its data, ordered so that the stronger of two states is the larger: a name in
    /// two entries answers as the larger of their kinds (any block beats an open grant).
    public enum Kind: UInt8, Hashable, Comparable, Sendable, Codable, CaseIterable {
        case none = 0, scheduled, open, blocked, curfew

        public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
        @inlinable public var isBlocking: Bool { self == .blocked || self == .curfew }
        @inlinable public var isManaged: Bool { self != .none }
        /// The `--json` spelling (SPEC §13).
        public var name: String {
            switch self {
            case .none: return "none"
            case .scheduled: return "scheduled"
            case .blocked: return "blocked"
            case .open: return "open"
            case .curfew: return "curfew"
            }
        }
    }

    @inlinable public var kind: Kind {
        switch self {
        case .none: return .none
        case .scheduled: return .scheduled
        case .blocked: return .blocked
        case .open: return .open
        case .curfew: return .curfew
        }
    }

    /// The `--json` spelling (SPEC §13).
    public var name: String {
        switch self {
        case .none: return "none"
        case .scheduled: return "scheduled"
        case .blocked: return "blocked"
        case .open: return "open"
        case .curfew: return "curfew"
        }
    }

    /// Whether the entry's names are answered with a block now.
    @inlinable public var isBlocking: Bool {
        switch self {
        case .blocked, .curfew: return true
        case .none, .scheduled, .open: return false
        }
    }

    /// Whether any rule of the profile names this entry (SPEC §9 "managed names").
    @inlinable public var isManaged: Bool { self != .none }
}

/// An entry's state, why, and until when it holds.
public struct EntryStatus: Hashable, Sendable, Codable {
    public var entry: EntryID
    public var state: EntryState
    /// The earliest instant after which the state is different: a window edge, a focus session edge
    /// or a grant's start or end. Nil when nothing scheduled will change it. DNS answers for the
    /// entry's names live no longer than this (SPEC §9) and the helper sets its timers by it.
    public var nextChange: Instant?
    /// The person's own reason for the rule in force, if they gave one (SPEC §2): the first of
    /// ``reasons``.
    public var reason: String?
    /// The reasons of every rule in force that blocks the entry now, strongest rule first (a curfew's,
    /// then the around-the-clock block's, a block window's, a focus session's), without repeats: a
    /// curfew over an all-day block keeps the block's words too.
    public var reasons: [String]
    /// The state the entry changes to at ``nextChange``, nil when nothing changes.
    public var nextState: EntryState.Kind?

    public init(entry: EntryID, state: EntryState, nextChange: Instant?, reason: String?,
                reasons: [String]? = nil, nextState: EntryState.Kind? = nil) {
        self.entry = entry
        self.state = state
        self.nextChange = nextChange
        self.reason = reason
        self.reasons = reasons ?? reason.map { [$0] } ?? []
        self.nextState = nextState
    }
}
