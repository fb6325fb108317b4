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

    /// The count was first called `times_referenced`; it is written under both names.
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
    /// SPEC §12: set on `ruleChange` events.
    public var ruleChange: RuleChangeInfo?
    /// SPEC §12: set on `bypassRefused` and `editRefused` events.
    public var refusal: RefusalInfo?
    /// The device that asked, on urges (SPEC §9 privacy: nothing else records addresses), so
    /// `scrolloff watch --notify` on a workstation tells only of urges from that machine.
    public var clientIP: String?

    public init(id: Int64?, profile: String?, time: Instant, kind: String, entry: String?, message: String?,
                ruleChange: RuleChangeInfo? = nil, refusal: RefusalInfo? = nil, clientIP: String? = nil) {
        self.id = id
        self.profile = profile
        self.time = time
        self.kind = kind
        self.entry = entry
        self.message = message
        self.ruleChange = ruleChange
        self.refusal = refusal
        self.clientIP = clientIP
    }

    enum CodingKeys: String, CodingKey {
        case id, profile, time, kind, entry, message, refusal
        case ruleChange = "rule_change"
        case clientIP = "client_ip"
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

/// The period `stats` covers (SPEC §7, §13: `--day|--week|--month|--year`).
public enum StatsPeriod: String, Hashable, Sendable, Codable, CaseIterable {
    /// Today so far.
    case day
    /// Today and the 6 local days before it.
    case week
    /// Today and the 29 local days before it.
    case month
    /// Today and the 364 local days before it.
    case year

    /// How many local days the period covers, today included.
    public var days: Int {
        switch self {
        case .day: 1
        case .week: 7
        case .month: 30
        case .year: 365
        }
    }
}

/// `scrolloff stats` (SPEC §13 fields and the figures of SPEC §7): every number comes from the core's
/// `Insights`, computed once by the helper.
public struct StatsReport: Hashable, Sendable, Codable {
    public var profile: String
    public var period: StatsPeriod
    public var firstDay: String
    public var lastDay: String
    public var urges: Int
    public var urgesResisted: Int
    /// Resisted urges in percent, nil without urges.
    public var resistedPercent: Int?
    public var protectedSeconds: Int64
    /// Credit spent (spends and paid peeks).
    public var spentSeconds: Int64
    /// Time entries stood open by grants, peeks and tokens included ("time spent").
    public var openSeconds: Int64
    public var earnedSeconds: Int64
    public var peeks: Int
    public var tokens: Int
    /// "Try this first" exercises done.
    public var exercises: Int
    public var streakDays: Int
    public var streakStart: String?
    /// The same number of days just before the period, and the change against it in percent.
    public var previous: InsightTotals
    public var change: InsightChange?
    public var weekOverWeek: InsightChange
    public var monthOverMonth: InsightChange
    public var lifetime: InsightTotals
    /// One point per day, oldest first (at least 7).
    public var trend: [DayFigureReport]
    /// Urges by local hour, 24 buckets; `peak_hours` the two-hour stretch with the most.
    public var heatmap: [Int]
    public var peakHours: HourRange?
    public var weekdays: [WeekdayFigures]
    public var strongestWeekday: String?
    public var toughestWeekday: String?
    public var topEntries: [EntryFigures]
    public var bests: BestsReport
    public var milestones: [MilestoneReport]
    /// Two or three sentences built from these numbers (`InsightSentences`).
    public var summary: [String]
    /// What is approximate about these numbers, in words.
    public var notes: [String]

    public init(profile: String, period: StatsPeriod, insights i: Insights, calendar: LocalCalendar, notes: [String]) {
        self.profile = profile
        self.period = period
        firstDay = i.firstDay.description
        lastDay = i.lastDay.description
        urges = i.totals.urges
        urgesResisted = i.totals.resisted
        resistedPercent = i.totals.resistedPercent
        protectedSeconds = i.totals.protectedSeconds
        spentSeconds = i.totals.spentSeconds
        openSeconds = i.totals.openSeconds
        earnedSeconds = i.totals.earnedSeconds
        peeks = i.totals.peeks
        tokens = i.totals.tokens
        exercises = i.totals.exercises
        streakDays = i.streakDays
        streakStart = i.streakStart?.description
        previous = i.previous ?? InsightTotals()
        change = i.change
        weekOverWeek = i.weekOverWeek
        monthOverMonth = i.monthOverMonth
        lifetime = i.lifetime
        trend = i.trend.map { DayFigureReport($0, calendar: calendar) }
        heatmap = i.heatmap
        peakHours = i.peakHours
        weekdays = i.weekdays
        strongestWeekday = i.strongestWeekday.map { WeekdayFigures.names[$0 - 1] }
        toughestWeekday = i.toughestWeekday.map { WeekdayFigures.names[$0 - 1] }
        topEntries = i.topEntries
        bests = BestsReport(i.bests)
        milestones = i.milestones.map(MilestoneReport.init)
        summary = []
        self.notes = notes
        summary = InsightSentences.summary(self)
    }

    enum CodingKeys: String, CodingKey {
        case profile, period, urges, peeks, tokens, notes, exercises, previous, change, lifetime, trend, heatmap, weekdays,
             bests, milestones, summary
        case firstDay = "first_day"
        case lastDay = "last_day"
        case urgesResisted = "urges_resisted"
        case resistedPercent = "resisted_percent"
        case protectedSeconds = "protected_seconds"
        case spentSeconds = "spent_seconds"
        case openSeconds = "open_seconds"
        case earnedSeconds = "earned_seconds"
        case streakDays = "streak_days"
        case streakStart = "streak_start"
        case weekOverWeek = "week_over_week"
        case monthOverMonth = "month_over_month"
        case peakHours = "peak_hours"
        case strongestWeekday = "strongest_weekday"
        case toughestWeekday = "toughest_weekday"
        case topEntries = "top_entries"
    }
}
