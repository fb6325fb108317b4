import Foundation
import ScrollOffCore

extension StatsPeriod {
    /// "this week" in sentences; the period is the run of local days ending today.
    public var words: String {
        switch self {
        case .day: "today"
        case .week: "this week"
        case .month: "this month"
        case .year: "this year"
        }
    }

    /// What the period before it is called ("3 more than last week").
    public var previousWords: String {
        switch self {
        case .day: "yesterday"
        case .week: "last week"
        case .month: "last month"
        case .year: "last year"
        }
    }
}

/// One day of the trend on the wire (`trend[]`).
public struct DayFigureReport: Hashable, Sendable, Codable {
    public var day: String
    public var weekday: String
    public var urges: Int
    public var resisted: Int
    public var protectedSeconds: Int64
    public var openSeconds: Int64
    public var earnedSeconds: Int64
    public var spentSeconds: Int64

    public init(_ f: InsightDayFigures, calendar: LocalCalendar) {
        day = f.day.description
        weekday = WeekdayFigures.names[calendar.weekday(of: f.day) - 1]
        urges = f.urges
        resisted = f.resisted
        protectedSeconds = f.protectedSeconds
        openSeconds = f.openSeconds
        earnedSeconds = f.earnedSeconds
        spentSeconds = f.spentSeconds
    }

    enum CodingKeys: String, CodingKey {
        case day, weekday, urges, resisted
        case protectedSeconds = "protected_seconds"
        case openSeconds = "open_seconds"
        case earnedSeconds = "earned_seconds"
        case spentSeconds = "spent_seconds"
    }
}

/// Personal bests on the wire (`bests`).
public struct BestsReport: Hashable, Sendable, Codable {
    public var mostResisted: Int
    public var mostResistedDay: String?
    public var mostProtectedSeconds: Int64
    public var mostProtectedDay: String?
    public var longestStreakDays: Int

    public init(_ b: PersonalBests) {
        mostResisted = b.mostResisted
        mostResistedDay = b.mostResistedDay?.description
        mostProtectedSeconds = b.mostProtectedSeconds
        mostProtectedDay = b.mostProtectedDay?.description
        longestStreakDays = b.longestStreakDays
    }

    enum CodingKeys: String, CodingKey {
        case mostResisted = "most_resisted"
        case mostResistedDay = "most_resisted_day"
        case mostProtectedSeconds = "most_protected_seconds"
        case mostProtectedDay = "most_protected_day"
        case longestStreakDays = "longest_streak_days"
    }
}

/// A milestone on the wire (`milestones[]`).
public struct MilestoneReport: Hashable, Sendable, Codable {
    public var key: String
    public var kind: String
    public var value: Int
    public var reachedOn: String
    public var message: String

    public init(_ m: Milestone) {
        key = m.key
        kind = m.kind.rawValue
        value = m.value
        reachedOn = m.reachedOn.description
        message = m.message
    }

    enum CodingKeys: String, CodingKey {
        case key, kind, value, message
        case reachedOn = "reached_on"
    }
}

/// The household page's and `digest`'s view of the weekly digest (`GET /v1/digest`).
public struct DigestReport: Hashable, Sendable, Codable {
    public var profile: String
    /// The latest digest written, nil before the first Sunday evening.
    public var digest: StatsReport?
    @WireOptionalTime public var writtenAt: Instant?
    /// When the next one is due.
    @WireTime public var nextAt: Instant
    /// The helper's trusted time when it answered.
    @WireTime public var now: Instant

    public init(profile: String, digest: StatsReport?, writtenAt: Instant?, nextAt: Instant, now: Instant) {
        self.now = now
        self.profile = profile
        self.digest = digest
        self.writtenAt = writtenAt
        self.nextAt = nextAt
    }

    enum CodingKeys: String, CodingKey {
        case profile, digest, now
        case writtenAt = "written_at"
        case nextAt = "next_at"
    }
}

/// Sentences built from the numbers (SPEC §7 "supportive and numbers-first"): what the person did,
/// compared only upward ("3 more than last week"), never a scold. One place, read by `stats`, the
/// digest and the household page.
public enum InsightSentences {
    public static func summary(_ r: StatsReport) -> [String] {
        var out: [String] = []
        let period = r.period.words
        if r.urges > 0, r.urgesResisted == 0 {
            // "You resisted 0 of 5" would be a score of nothing: say what was noticed, and what helps.
            out.append("You noticed \(r.urges) \(r.urges == 1 ? "urge" : "urges") \(period) — each one is a chance to try your plan.")
        } else if r.urges > 0 {
            var s = "You resisted \(r.urgesResisted) of \(r.urges) \(r.urges == 1 ? "urge" : "urges") \(period)"
            if let c = r.change, c.previousUrges > 0 {
                if c.resistedDelta > 0 { s += " — \(c.resistedDelta) more than \(r.period.previousWords)" }
                else if c.resistedDelta == 0 { s += " — as many as \(r.period.previousWords)" }
            }
            out.append(s + ".")
        } else if r.protectedSeconds > 0 {
            out.append("No urges \(period) — a calm stretch.")
        } else {
            out.append("Nothing recorded \(period) yet.")
        }
        if r.protectedSeconds > 0 {
            var s = "Your blocks protected \(TimeWords.span(seconds: r.protectedSeconds))"
            if r.earnedSeconds > 0 { s += " and earned you \(TimeWords.span(seconds: r.earnedSeconds)) of credit" }
            out.append(s + ".")
        }
        if r.streakDays > 1 {
            let best = r.streakDays >= r.bests.longestStreakDays ? " — your longest yet" : ""
            out.append("\(r.streakDays) days in a row on your streak\(best).")
        } else if let peak = r.peakHours {
            out.append("Most urges come \(peak.start)–\(peak.end) h; a plan for that time can help.")
        }
        return Array(out.prefix(3))
    }
}
