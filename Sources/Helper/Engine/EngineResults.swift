import ScrollOffCore
import Store

// The answers of engine commands: plain Codable values whose camelCase names become the SPEC §13
// `--json` names under `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`
// (`balanceSeconds` → `balance_seconds`). Instants stay `Instant`s: the CLI formats them in the
// person's zone.

/// One entry in `status` (SPEC §13 `entries[]`).
public struct EntryReport: Hashable, Sendable, Codable {
    public var id: String
    /// `blocked`, `open`, `curfew`, `scheduled` (or `none` for an entry with no rule left).
    public var state: String
    /// Until when a weakening is refused (cooldown, edit lock, focus session); nil = not locked.
    public var lockedUntil: Instant?
    public var reason: String?
    /// When the state next changes (window edge, grant end); nil = nothing scheduled.
    public var nextChange: Instant?
    /// For `open`: when the block returns.
    public var openUntil: Instant?

    enum CodingKeys: String, CodingKey { case id, state, lockedUntil, reason, nextChange, openUntil }

    /// `locked_until` is written as `null` when nothing is locked rather than left out: SPEC §13
    /// says the field must exist.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(state, forKey: .state)
        try c.encode(lockedUntil, forKey: .lockedUntil)
        try c.encodeIfPresent(reason, forKey: .reason)
        try c.encodeIfPresent(nextChange, forKey: .nextChange)
        try c.encodeIfPresent(openUntil, forKey: .openUntil)
    }
}

/// A running grant (spend, peek, token) with its stated task (SPEC §5).
public struct GrantReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var entry: String
    public var kind: String
    public var start: Instant
    public var end: Instant
    public var task: String?

    init(_ g: Grant) {
        id = g.id
        entry = g.entry.rawValue
        kind = g.kind.rawValue
        start = g.start
        end = g.end
        task = g.task
    }
}

/// `scrolloff status`.
public struct StatusReport: Hashable, Sendable, Codable {
    public var profile: String
    public var now: Instant
    public var entries: [EntryReport]
    public var peeksLeftToday: Int
    public var tokensLeftMonth: Int
    public var balanceSeconds: Int64
    public var grants: [GrantReport]
    /// The end of a strict curfew in force (every name but the allow list blocked).
    public var strictCurfewUntil: Instant?
}

/// One batch of credit in `wallet` (SPEC §4 rollover).
public struct BatchReport: Hashable, Sendable, Codable {
    /// `earned`, `starter` or `adjustment`.
    public var origin: String
    public var earnedOn: String?
    public var remainingSeconds: Int64
    public var expiresAt: Instant?
    public var earmark: String?
}

/// `scrolloff wallet` (SPEC §13 fields `balance_seconds`, `earned_today_seconds`, `spent_today_seconds`).
public struct WalletReport: Hashable, Sendable, Codable {
    public var profile: String
    public var balanceSeconds: Int64
    public var earnedTodaySeconds: Int64
    public var spentTodaySeconds: Int64
    public var batches: [BatchReport]
    public var nextAwardAt: Instant?
    public var earningFrozenUntil: Instant?
    public var grants: [GrantReport]
}

/// What `use`, `peek` and `token` answer: the grant, and what SPEC §8 shows first.
public struct GrantResult: Hashable, Sendable, Codable {
    public var grant: GrantReport
    /// The person's own plan shown before the bypass (SPEC §8); its shown count went up by one.
    public var plan: PlanReport?
    /// Things to do instead (SPEC §8), newest first.
    public var alternatives: [String]
    public var balanceSeconds: Int64
    public var peeksLeftToday: Int
    public var tokensLeftMonth: Int
    /// Supportive, numbers-first words for the CLI.
    public var message: String
}

/// `stop`.
public struct StopResult: Hashable, Sendable, Codable {
    public var stopped: [GrantReport]
    public var balanceSeconds: Int64
    public var message: String
}

/// `block` / `unblock`: the entries changed.
public struct BlockResult: Hashable, Sendable, Codable {
    public var entries: [EntryReport]
    public var message: String
}

public struct ScheduleReport: Hashable, Sendable, Codable {
    public var name: String
    public var from: String
    public var to: String
    /// SPEC §2 bitmask: Sun=1, Mon=2, … Sat=64.
    public var days: Int
    public var daysText: String
    public var timeZone: String
    /// `block`, `curfew` or `strict-curfew`.
    public var kind: String
    public var entries: [String]
    public var reason: String?
    public var enabled: Bool
    public var lockedUntil: Instant?

    init(_ s: Schedule, at t: Instant) {
        name = s.name
        from = s.start.description
        to = s.end.description
        days = Int(s.days.rawValue)
        daysText = s.days.description
        timeZone = s.timeZoneID
        kind = switch s.kind {
        case .block: "block"
        case .curfew: "curfew"
        case .strictCurfew: "strict-curfew"
        }
        entries = s.entries.sorted().map(\.rawValue)
        reason = s.reason
        enabled = s.enabled
        let lock = ChangeRules.curfewEditLock(of: s, at: t)
        let cooldown = s.cooldownUntil.flatMap { $0 > t ? $0 : nil }
        lockedUntil = [lock, cooldown].compactMap { $0 }.max()
    }
}

public struct FocusReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var entries: [String]
    public var start: Instant
    public var end: Instant
    public var reason: String?
}

public struct PlanReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var when: String
    public var then: String
    public var archived: Bool
    public var shownCount: Int
    public var created: Instant

    init(_ p: Plan) {
        id = p.id
        when = p.when
        then = p.then
        archived = p.archived
        shownCount = p.shownCount
        created = p.created
    }
}

public struct AlternativeReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var text: String
    public var created: Instant
}

public struct EventReport: Hashable, Sendable, Codable {
    public var id: Int64?
    public var profile: String?
    public var time: Instant
    public var kind: String
    public var entry: String?
    public var message: String?
}

/// The period `stats` covers (SPEC §7, §13 `--day|--week|--month`).
public enum StatsPeriod: String, Hashable, Sendable, Codable, CaseIterable {
    /// Today so far.
    case day
    /// Today and the 6 local days before it.
    case week
    /// Today and the 29 local days before it.
    case month

    var days: Int {
        switch self {
        case .day: 1
        case .week: 7
        case .month: 30
        }
    }
}

/// `scrolloff stats` (SPEC §13 fields).
public struct StatsReport: Hashable, Sendable, Codable {
    public var profile: String
    public var period: StatsPeriod
    public var firstDay: String
    public var lastDay: String
    public var urges: Int
    public var urgesResisted: Int
    public var protectedSeconds: Int64
    /// Credit spent (spends and paid peeks).
    public var spentSeconds: Int64
    /// Time entries stood open by grants, peeks and tokens included.
    public var openSeconds: Int64
    public var earnedSeconds: Int64
    public var peeks: Int
    public var tokens: Int
    public var streakDays: Int
    /// What is approximate about these numbers, in words.
    public var notes: [String]
}

/// One urge episode waiting to be written (SPEC §7).
struct PendingUrge: Hashable, Sendable {
    var profile: String
    var entry: EntryID
    var client: String
    var time: Instant
}
