import Foundation
import ScrollOffCore

// The answers of the helper's engine commands, shared by the helper (which builds them) and the
// CLI (which decodes and prints them). Keys are spelled out in snake_case in each `CodingKeys`:
// these are the `--json` names SPEC §13 says scripts rely on. Instants travel as RFC 3339
// timestamps (`WireTime`); the CLI formats them in the person's zone.

/// An entry's state as `status`, `block` and `services` spell it (SPEC §13 `entries[].state`): the
/// five kinds of `EntryState`, spelt by `EntryState.Kind.name`. Any other word decodes as
/// `.unknown` and is kept as it came, as when the field was a plain string: a CLI older than its
/// helper still prints a state it does not know instead of failing the whole answer.
public enum EntryStateName: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    case none, scheduled, blocked, open, curfew
    case unknown(String)

    public init(_ kind: EntryState.Kind) {
        switch kind {
        case .none: self = .none
        case .scheduled: self = .scheduled
        case .blocked: self = .blocked
        case .open: self = .open
        case .curfew: self = .curfew
        }
    }

    /// The word as the wire spells it; a word that is no kind is `.unknown`.
    public init(wireName: String) {
        self = EntryState.Kind.allCases.first { $0.name == wireName }.map(Self.init) ?? .unknown(wireName)
    }

    public init(stringLiteral value: String) { self.init(wireName: value) }

    /// The kind, nil for `.unknown`.
    public var kind: EntryState.Kind? {
        // Spelt out: a bare `.none` here would be the optional's nil.
        switch self {
        case .none: EntryState.Kind.none
        case .scheduled: EntryState.Kind.scheduled
        case .blocked: EntryState.Kind.blocked
        case .open: EntryState.Kind.open
        case .curfew: EntryState.Kind.curfew
        case .unknown: nil
        }
    }

    public var wireName: String {
        if case .unknown(let word) = self { return word }
        return kind?.name ?? ""
    }

    public var description: String { wireName }

    /// Blocked now: `blocked` or `curfew`.
    public var isBlocking: Bool { kind?.isBlocking ?? false }

    public init(from decoder: any Decoder) throws {
        self.init(wireName: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(wireName)
    }
}

/// One entry in `status` (SPEC §13 `entries[]`).
public struct EntryReport: Hashable, Sendable, Codable {
    public var id: String
    /// `blocked`, `open`, `curfew`, `scheduled` (or `none` for an entry with no rule left).
    public var state: EntryStateName
    /// Until when a weakening is refused (cooldown, edit lock, focus session); null = not locked.
    /// Always written, even as null: SPEC §13 says the field must exist.
    @WireOptionalTime public var lockedUntil: Instant?
    public var reason: String?
    /// When the state next changes (window edge, grant end); nil = nothing scheduled.
    @WireOptionalTime public var nextChange: Instant?
    /// For `open`: when the block returns.
    @WireOptionalTime public var openUntil: Instant?
    /// The state at `next_change` (`blocked` when a curfew ends under an all-day block); nil with it.
    public var nextState: EntryStateName?
    /// The reasons of every rule in force that blocks the entry, strongest first; `reason` is the first.
    public var reasons: [String]
    /// Seconds of today's daily allowance left for it (SPEC §4a); absent when none covers it today.
    public var allowanceLeftSeconds: Int64?
    /// Whether a block around the clock names the entry: only then does `unblock` have something to
    /// remove (a schedule or focus session is not unblocked).
    public var aroundTheClock: Bool
    /// After a peek or token the entry rests for twice its length (SPEC §5): until then no peek or
    /// token opens it. Nil when it does not rest.
    @WireOptionalTime public var bypassRestsUntil: Instant?

    public init(id: String, state: EntryStateName, lockedUntil: Instant?, reason: String?, nextChange: Instant?, openUntil: Instant?,
                nextState: EntryStateName? = nil, reasons: [String]? = nil, aroundTheClock: Bool = false, bypassRestsUntil: Instant? = nil) {
        self.id = id
        self.state = state
        self.lockedUntil = lockedUntil
        self.reason = reason
        self.nextChange = nextChange
        self.openUntil = openUntil
        self.nextState = nextState
        self.reasons = reasons ?? reason.map { [$0] } ?? []
        self.aroundTheClock = aroundTheClock
        self.bypassRestsUntil = bypassRestsUntil
    }

    /// With the states as `EntryState.name` spells them (the engine's call sites).
    public init(id: String, state: String, lockedUntil: Instant?, reason: String?, nextChange: Instant?, openUntil: Instant?,
                nextState: String? = nil, reasons: [String]? = nil, aroundTheClock: Bool = false, bypassRestsUntil: Instant? = nil) {
        self.init(id: id, state: EntryStateName(wireName: state), lockedUntil: lockedUntil, reason: reason, nextChange: nextChange,
                  openUntil: openUntil, nextState: nextState.map(EntryStateName.init(wireName:)), reasons: reasons,
                  aroundTheClock: aroundTheClock, bypassRestsUntil: bypassRestsUntil)
    }

    /// What the entry becomes at its next change, in the words `status` and the household page
    /// share: "then curfew at 21:30" when a block is followed by a curfew, "opens at 07:00" when it
    /// opens, "until 12:10" for an open grant; nil when nothing is scheduled.
    public func nextChangeWords(now: Instant) -> String? {
        if let open = openUntil { return "until \(TimeWords.until(open, now: now))" }
        guard let next = nextChange else { return nil }
        // Say what it becomes: a curfew ending under an all-day block stays blocked.
        let words = switch nextState {
        case let state? where state.isBlocking: "then \(state.wireName) at"
        case let state? where state.kind != nil: "opens at"
        default: "changes at"
        }
        return "\(words) \(TimeWords.until(next, now: now))"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        state = try c.decode(EntryStateName.self, forKey: .state)
        _lockedUntil = try c.decode(WireOptionalTime.self, forKey: .lockedUntil)
        reason = try c.decodeIfPresent(String.self, forKey: .reason)
        _nextChange = try c.decodeIfPresent(WireOptionalTime.self, forKey: .nextChange) ?? WireOptionalTime(wrappedValue: nil)
        _openUntil = try c.decodeIfPresent(WireOptionalTime.self, forKey: .openUntil) ?? WireOptionalTime(wrappedValue: nil)
        nextState = try c.decodeIfPresent(EntryStateName.self, forKey: .nextState)
        reasons = try c.decodeIfPresent([String].self, forKey: .reasons) ?? reason.map { [$0] } ?? []
        allowanceLeftSeconds = try c.decodeIfPresent(Int64.self, forKey: .allowanceLeftSeconds)
        aroundTheClock = try c.decodeIfPresent(Bool.self, forKey: .aroundTheClock) ?? false
        _bypassRestsUntil = try c.decodeIfPresent(WireOptionalTime.self, forKey: .bypassRestsUntil) ?? WireOptionalTime(wrappedValue: nil)
    }

    enum CodingKeys: String, CodingKey {
        case id, state, reason, reasons
        case aroundTheClock = "around_the_clock"
        case bypassRestsUntil = "bypass_rests_until"
        case nextState = "next_state"
        case lockedUntil = "locked_until"
        case nextChange = "next_change"
        case openUntil = "open_until"
        case allowanceLeftSeconds = "allowance_left_seconds"
    }
}

/// A running grant (spend, peek, token) with its stated task (SPEC §5).
public struct GrantReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var entry: String
    /// `spend`, `peek` or `token`.
    public var kind: String
    @WireTime public var start: Instant
    @WireTime public var end: Instant
    public var task: String?

    public init(id: Int64, entry: String, kind: String, start: Instant, end: Instant, task: String?) {
        self.id = id
        self.entry = entry
        self.kind = kind
        self.start = start
        self.end = end
        self.task = task
    }
}

/// `scrolloff status` (SPEC §13).
public struct StatusReport: Hashable, Sendable, Codable {
    public var profile: String
    @WireTime public var now: Instant
    public var entries: [EntryReport]
    public var peeksLeftToday: Int
    public var tokensLeftMonth: Int
    public var balanceSeconds: Int64
    public var grants: [GrantReport]
    /// Focus sessions running now, with their ends.
    public var focus: [FocusReport]
    /// The end of a strict curfew in force (every name but the allow list blocked).
    @WireOptionalTime public var strictCurfewUntil: Instant?
    /// The profile's requests for time that are pending or were answered in the last 7 days
    /// (SPEC §9a), newest first, so a member sees the answer.
    public var requests: [TimeRequestInfo]?
    /// An owner's pause in force (SPEC §5a); absent when the profile is not paused.
    public var pause: PauseReport?
    /// The daily allowances (SPEC §4a) with what is left of each today.
    public var allowances: [AllowanceInfo]?

    public init(profile: String, now: Instant, entries: [EntryReport], peeksLeftToday: Int, tokensLeftMonth: Int,
                balanceSeconds: Int64, grants: [GrantReport], strictCurfewUntil: Instant?, focus: [FocusReport] = [],
                requests: [TimeRequestInfo]? = nil) {
        self.focus = focus
        self.requests = requests
        self.profile = profile
        self.now = now
        self.entries = entries
        self.peeksLeftToday = peeksLeftToday
        self.tokensLeftMonth = tokensLeftMonth
        self.balanceSeconds = balanceSeconds
        self.grants = grants
        self.strictCurfewUntil = strictCurfewUntil
    }

    enum CodingKeys: String, CodingKey {
        case profile, now, entries, grants, focus, requests, pause, allowances
        case peeksLeftToday = "peeks_left_today"
        case tokensLeftMonth = "tokens_left_month"
        case balanceSeconds = "balance_seconds"
        case strictCurfewUntil = "strict_curfew_until"
    }
}

/// One curated service in `scrolloff services` (SPEC §13).
public struct ServiceReport: Hashable, Sendable, Codable {
    public var id: String
    public var name: String
    public var category: String
    public var note: String?
    /// The entry's state in the asking profile (`blocked`, `open`, `curfew`, `scheduled`, `none`).
    public var state: EntryStateName

    /// "Instagram (social)"; a name that already says its category ("Amazon (shopping)") as it is.
    public var displayName: String {
        name.lowercased().contains("(\(category.lowercased()))") ? name : "\(name) (\(category))"
    }

    public init(id: String, name: String, category: String, note: String?, state: EntryStateName) {
        self.id = id
        self.name = name
        self.category = category
        self.note = note
        self.state = state
    }

    /// With the state as `EntryState.name` spells it (the engine's call site).
    public init(id: String, name: String, category: String, note: String?, state: String) {
        self.init(id: id, name: name, category: category, note: note, state: EntryStateName(wireName: state))
    }
}

/// `GET /v1/services`.
public struct ServicesResponse: Hashable, Sendable, Codable {
    public var services: [ServiceReport]
    public init(services: [ServiceReport]) { self.services = services }
}
