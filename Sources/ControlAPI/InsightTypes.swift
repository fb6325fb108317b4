import Foundation
import ScrollOffCore

/// An implementation intention (SPEC §8): "when X, then I will Y".
public struct PlanReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var when: String
    public var then: String
    public var archived: Bool
    public var shownCount: Int
    @WireTime public var created: Instant

    public init(id: Int64, when: String, then: String, archived: Bool, shownCount: Int, created: Instant) {
        self.id = id
        self.when = when
        self.then = then
        self.archived = archived
        self.shownCount = shownCount
        self.created = created
    }

    enum CodingKeys: String, CodingKey {
        case id, when, then, archived, created
        case shownCount = "shown_count"
    }

    /// Issue 16 calls the count `times_referenced`; it is written under both names.
    private enum ExtraKeys: String, CodingKey {
        case timesReferenced = "times_referenced"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(when, forKey: .when)
        try c.encode(then, forKey: .then)
        try c.encode(archived, forKey: .archived)
        try c.encode(_created, forKey: .created)
        try c.encode(shownCount, forKey: .shownCount)
        var extra = encoder.container(keyedBy: ExtraKeys.self)
        try extra.encode(shownCount, forKey: .timesReferenced)
    }
}

/// `GET /v1/plans` (SPEC §13 `plans[]`).
public struct PlansResponse: Hashable, Sendable, Codable {
    public var plans: [PlanReport]
    public init(plans: [PlanReport]) { self.plans = plans }
}

/// Something to do instead (SPEC §8).
public struct AlternativeReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var text: String
    @WireTime public var created: Instant

    public init(id: Int64, text: String, created: Instant) {
        self.id = id
        self.text = text
        self.created = created
    }
}

/// `GET /v1/alternatives`.
public struct AlternativesResponse: Hashable, Sendable, Codable {
    public var alternatives: [AlternativeReport]
    public init(alternatives: [AlternativeReport]) { self.alternatives = alternatives }
}

/// One row of `events`.
public struct EventReport: Hashable, Sendable, Codable {
    public var id: Int64?
    public var profile: String?
    @WireTime public var time: Instant
    public var kind: String
    public var entry: String?
    public var message: String?
    /// Issue 16: set on `ruleChange` events.
    public var ruleChange: RuleChangeInfo?
    /// Issue 16: set on `bypassRefused` and `editRefused` events.
    public var refusal: RefusalInfo?

    public init(id: Int64?, profile: String?, time: Instant, kind: String, entry: String?, message: String?,
                ruleChange: RuleChangeInfo? = nil, refusal: RefusalInfo? = nil) {
        self.id = id
        self.profile = profile
        self.time = time
        self.kind = kind
        self.entry = entry
        self.message = message
        self.ruleChange = ruleChange
        self.refusal = refusal
    }

    enum CodingKeys: String, CodingKey {
        case id, profile, time, kind, entry, message, refusal
        case ruleChange = "rule_change"
    }
}

/// `GET /v1/events`.
public struct EventsResponse: Hashable, Sendable, Codable {
    public var events: [EventReport]
    /// The helper's trusted time when it answered (SPEC §11), so the CLI measures "until" and
    /// "today" against the helper's clock rather than its own. Nil from a helper that does not say.
    @WireOptionalTime public var now: Instant?

    public init(events: [EventReport], now: Instant? = nil) {
        self.events = events
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case events, now
    }
}

/// The period `stats` covers (SPEC §7, §13 `--day|--week|--month`).
public enum StatsPeriod: String, Hashable, Sendable, Codable, CaseIterable {
    /// Today so far.
    case day
    /// Today and the 6 local days before it.
    case week
    /// Today and the 29 local days before it.
    case month

    /// How many local days the period covers, today included.
    public var days: Int {
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

    public init(profile: String, period: StatsPeriod, firstDay: String, lastDay: String, urges: Int, urgesResisted: Int,
                protectedSeconds: Int64, spentSeconds: Int64, openSeconds: Int64, earnedSeconds: Int64, peeks: Int, tokens: Int,
                streakDays: Int, notes: [String]) {
        self.profile = profile
        self.period = period
        self.firstDay = firstDay
        self.lastDay = lastDay
        self.urges = urges
        self.urgesResisted = urgesResisted
        self.protectedSeconds = protectedSeconds
        self.spentSeconds = spentSeconds
        self.openSeconds = openSeconds
        self.earnedSeconds = earnedSeconds
        self.peeks = peeks
        self.tokens = tokens
        self.streakDays = streakDays
        self.notes = notes
    }

    enum CodingKeys: String, CodingKey {
        case profile, period, urges, peeks, tokens, notes
        case firstDay = "first_day"
        case lastDay = "last_day"
        case urgesResisted = "urges_resisted"
        case protectedSeconds = "protected_seconds"
        case spentSeconds = "spent_seconds"
        case openSeconds = "open_seconds"
        case earnedSeconds = "earned_seconds"
        case streakDays = "streak_days"
    }
}
