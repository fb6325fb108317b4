/// SPEC §7 insights as one pure function of the profile's days: `stats`, its `--json`, the weekly
/// digest, the milestones and the household page's charts all read this value, so a number means
/// the same everywhere (one decision path).
///
/// Periods are runs of whole local days ending today in the profile's zone (`LocalCalendar`), so a
/// DST week still has 7 days and an episode belongs to the local day (and hour) it happened on.
public struct Insights: Hashable, Sendable, Codable {
    /// How many local days the period covers, today included; nil = lifetime (from the first day recorded).
    public var periodDays: Int?
    public var firstDay: LocalCalendar.Day
    public var lastDay: LocalCalendar.Day
    public var totals: InsightTotals
    /// The same length of time just before the period (nil for lifetime).
    public var previous: InsightTotals?
    /// The period against the one before it, in percent.
    public var change: InsightChange?
    /// The last 7 days against the 7 before, and the last 30 against the 30 before.
    public var weekOverWeek: InsightChange
    public var monthOverMonth: InsightChange
    public var lifetime: InsightTotals
    /// One point per day of the period (at least the last 7 days), oldest first: the sparklines and the 7-day chart.
    public var trend: [InsightDayFigures]
    /// Urges by local hour over the period, 24 buckets.
    public var heatmap: [Int]
    /// The two-hour stretch with the most urges ("most urges 21–23 h"), nil without urges.
    public var peakHours: HourRange?
    /// Urges by weekday over the period (at least the last 28 days, so each weekday is seen 4 times), Sunday first.
    public var weekdays: [WeekdayFigures]
    /// The weekday with the best resisted share (nil when nothing was resisted); the one with the most urges.
    public var strongestWeekday: Int?
    public var toughestWeekday: Int?
    /// Entries by urges over the period, at most 5, most first.
    public var topEntries: [EntryFigures]
    public var bests: PersonalBests
    public var streakDays: Int
    /// The first day of the current streak.
    public var streakStart: LocalCalendar.Day?
    /// Milestones the current streak and the lifetime totals have reached (SPEC §7), each with a
    /// stable key so it is recorded once.
    public var milestones: [Milestone]

    /// The SPEC §7 milestones: streak lengths in days, and protected hours.
    public static let streakMilestones = [7, 30, 60, 100]
    public static let protectedMilestoneHours: Int64 = 100
    /// Entries listed in `topEntries`.
    public static let topEntryCount = 5

    /// - Parameters:
    ///   - days: every recorded day of the profile, any order; days with nothing recorded may be missing.
    ///   - today: the local day of the trusted now.
    ///   - periodDays: 1 (day), 7, 30, 365, or nil for lifetime.
    public init(days: [InsightDay], today: LocalCalendar.Day, periodDays: Int?, calendar: LocalCalendar) {
        var byDay: [LocalCalendar.Day: InsightDay] = [:]
        for d in days where d.day <= today { byDay[d.day, default: InsightDay(day: d.day)].add(d) }
        let recorded = byDay.keys.sorted()
        let firstRecorded = recorded.first
        func back(_ n: Int) -> LocalCalendar.Day { calendar.adding(days: -n, to: today) }
        func run(from: LocalCalendar.Day, through: LocalCalendar.Day) -> [InsightDay] {
            guard from <= through else { return [] }
            var out: [InsightDay] = []
            var d = from
            while d <= through {
                out.append(byDay[d] ?? InsightDay(day: d))
                d = calendar.adding(days: 1, to: d)
            }
            return out
        }

        self.periodDays = periodDays
        let first = periodDays.map { back($0 - 1) } ?? min(firstRecorded ?? today, today)
        firstDay = first
        lastDay = today
        let period = run(from: first, through: today)
        totals = InsightTotals(period)
        if let n = periodDays {
            let before = InsightTotals(run(from: back(2 * n - 1), through: back(n)))
            previous = before
            change = InsightChange(now: totals, before: before)
        }
        weekOverWeek = InsightChange(now: InsightTotals(run(from: back(6), through: today)),
                                     before: InsightTotals(run(from: back(13), through: back(7))))
        monthOverMonth = InsightChange(now: InsightTotals(run(from: back(29), through: today)),
                                       before: InsightTotals(run(from: back(59), through: back(30))))
        lifetime = InsightTotals(Array(byDay.values))

        let trendStart = periodDays.map { back(max($0, 7) - 1) } ?? min(first, back(6))
        trend = run(from: trendStart, through: today).map(InsightDayFigures.init)

        var hours = [Int](repeating: 0, count: 24)
        var entries: [String: EntryFigures] = [:]
        for d in period {
            for h in 0..<24 { hours[h] += d.hourUrges[h] }
            for (e, n) in d.entryUrges { entries[e, default: EntryFigures(entry: e)].urges += n }
            for (e, n) in d.entryResisted { entries[e, default: EntryFigures(entry: e)].resisted += n }
        }
        heatmap = hours
        peakHours = HourRange.peak(of: hours)
        topEntries = Array(entries.values.filter { $0.urges > 0 }
            .sorted { ($0.urges, $1.entry) > ($1.urges, $0.entry) }.prefix(Self.topEntryCount))

        var weekdays = (1...7).map { WeekdayFigures(weekday: $0) }
        let weekdayStart = periodDays.map { back(max($0, 28) - 1) } ?? first
        for d in run(from: weekdayStart, through: today) {
            let w = calendar.weekday(of: calendar.startOfDay(d.day))
            weekdays[w - 1].urges += d.urges
            weekdays[w - 1].resisted += d.resisted
        }
        self.weekdays = weekdays
        let seen = weekdays.filter { $0.urges > 0 }
        // Best share first (cross-multiplied, exact), then more resisted, then the earlier weekday.
        // A weekday with nothing resisted is never called strong, even if it is the only one seen.
        strongestWeekday = seen.filter { $0.resisted > 0 }.min { a, b in
            let l = a.resisted * b.urges, r = b.resisted * a.urges
            return l != r ? l > r : (a.resisted != b.resisted ? a.resisted > b.resisted : a.weekday < b.weekday)
        }?.weekday
        toughestWeekday = seen.min { a, b in a.urges != b.urges ? a.urges > b.urges : a.weekday < b.weekday }?.weekday

        // Streaks (SPEC §7): consecutive local days with no token used and spend ≤ earned. Days with
        // nothing recorded keep it; days before the first record do not count; today counts when it
        // keeps it so far and does not break it otherwise (the day is not over).
        var streak = 0
        var start: LocalCalendar.Day?
        if let firstRecorded {
            var d = today
            if byDay[d].map(\.keepsStreak) ?? true { streak += 1; start = d }
            d = calendar.adding(days: -1, to: d)
            while d >= firstRecorded, byDay[d].map(\.keepsStreak) ?? true {
                streak += 1
                start = d
                d = calendar.adding(days: -1, to: d)
            }
        }
        streakDays = streak
        streakStart = start

        var bests = PersonalBests()
        var runLength = 0
        var cumulativeProtected: Int64 = 0
        var protectedDay: LocalCalendar.Day?
        let limit = Self.protectedMilestoneHours * 3600
        for d in run(from: firstRecorded ?? today, through: today) {
            if d.resisted > bests.mostResisted { bests.mostResisted = d.resisted; bests.mostResistedDay = d.day }
            if d.protectedSeconds > bests.mostProtectedSeconds { bests.mostProtectedSeconds = d.protectedSeconds; bests.mostProtectedDay = d.day }
            runLength = d.keepsStreak ? runLength + 1 : 0
            bests.longestStreakDays = max(bests.longestStreakDays, runLength)
            cumulativeProtected += d.protectedSeconds
            if protectedDay == nil, cumulativeProtected >= limit { protectedDay = d.day }
        }
        if firstRecorded == nil { bests.longestStreakDays = 0 }
        bests.longestStreakDays = max(bests.longestStreakDays, streak)
        self.bests = bests

        var milestones: [Milestone] = []
        if let start {
            for t in Self.streakMilestones where streak >= t {
                milestones.append(Milestone(key: "streak-\(t)-from-\(start)", kind: .streak, value: t,
                                            reachedOn: calendar.adding(days: t - 1, to: start)))
            }
        }
        if let protectedDay {
            milestones.append(Milestone(key: "protected-\(Self.protectedMilestoneHours)h", kind: .protectedHours,
                                        value: Int(Self.protectedMilestoneHours), reachedOn: protectedDay))
        }
        self.milestones = milestones
    }
}

/// Sums over a run of days.
public struct InsightTotals: Hashable, Sendable, Codable {
    public var urges = 0
    public var resisted = 0
    public var protectedSeconds: Int64 = 0
    public var openSeconds: Int64 = 0
    public var spentSeconds: Int64 = 0
    public var earnedSeconds: Int64 = 0
    public var peeks = 0
    public var tokens = 0
    public var exercises = 0

    public init() {}

    public init(_ days: [InsightDay]) {
        for d in days {
            urges += d.urges
            resisted += d.resisted
            protectedSeconds += d.protectedSeconds
            openSeconds += d.openSeconds
            spentSeconds += d.spentSeconds
            earnedSeconds += d.earnedSeconds
            peeks += d.peeks
            tokens += d.tokens
            exercises += d.exercises
        }
    }

    /// Resisted urges in percent of all urges, rounded half up; nil without urges.
    public var resistedPercent: Int? { urges == 0 ? nil : (resisted * 200 + urges) / (2 * urges) }

    enum CodingKeys: String, CodingKey {
        case urges, resisted, peeks, tokens, exercises
        case protectedSeconds = "protected_seconds"
        case openSeconds = "open_seconds"
        case spentSeconds = "spent_seconds"
        case earnedSeconds = "earned_seconds"
    }

    /// Written beside the sums (`previous`, `lifetime`), so the resisted share of every period is
    /// in `--json` without a script dividing; derived, so it is not read back.
    private enum DerivedKeys: String, CodingKey {
        case resistedPercent = "resisted_percent"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(urges, forKey: .urges)
        try c.encode(resisted, forKey: .resisted)
        try c.encode(protectedSeconds, forKey: .protectedSeconds)
        try c.encode(openSeconds, forKey: .openSeconds)
        try c.encode(spentSeconds, forKey: .spentSeconds)
        try c.encode(earnedSeconds, forKey: .earnedSeconds)
        try c.encode(peeks, forKey: .peeks)
        try c.encode(tokens, forKey: .tokens)
        try c.encode(exercises, forKey: .exercises)
        var derived = encoder.container(keyedBy: DerivedKeys.self)
        try derived.encodeIfPresent(resistedPercent, forKey: .resistedPercent)
    }
}

/// One period against the one before it.
public struct InsightChange: Hashable, Sendable, Codable {
    public var urgesPercent: Int?
    public var resistedPercent: Int?
    public var protectedPercent: Int?
    public var openPercent: Int?
    /// Resisted urges now minus before (the "3 more than last week").
    public var resistedDelta: Int
    public var previousUrges: Int
    public var previousResisted: Int

    public init(now: InsightTotals, before: InsightTotals) {
        urgesPercent = Self.percent(Int64(now.urges), Int64(before.urges))
        resistedPercent = Self.percent(Int64(now.resisted), Int64(before.resisted))
        protectedPercent = Self.percent(now.protectedSeconds, before.protectedSeconds)
        openPercent = Self.percent(now.openSeconds, before.openSeconds)
        resistedDelta = now.resisted - before.resisted
        previousUrges = before.urges
        previousResisted = before.resisted
    }

    /// (now − before) / before in percent, rounded half away from zero; nil when before is 0.
    public static func percent(_ now: Int64, _ before: Int64) -> Int? {
        guard before != 0 else { return nil }
        let diff = (now - before) * 200
        let q = diff >= 0 ? (diff + before) / (2 * before) : (diff - before) / (2 * before)
        return Int(q)
    }

    enum CodingKeys: String, CodingKey {
        case urgesPercent = "urges_percent"
        case resistedPercent = "resisted_percent"
        case protectedPercent = "protected_percent"
        case openPercent = "open_percent"
        case resistedDelta = "resisted_delta"
        case previousUrges = "previous_urges"
        case previousResisted = "previous_resisted"
    }
}

/// One day of the trend.
public struct InsightDayFigures: Hashable, Sendable, Codable {
    public var day: LocalCalendar.Day
    public var urges: Int
    public var resisted: Int
    public var protectedSeconds: Int64
    public var openSeconds: Int64
    public var earnedSeconds: Int64
    public var spentSeconds: Int64

    public init(_ d: InsightDay) {
        day = d.day
        urges = d.urges
        resisted = d.resisted
        protectedSeconds = d.protectedSeconds
        openSeconds = d.openSeconds
        earnedSeconds = d.earnedSeconds
        spentSeconds = d.spentSeconds
    }
}

public struct EntryFigures: Hashable, Sendable, Codable {
    public var entry: String
    public var urges = 0
    public var resisted = 0
    public init(entry: String, urges: Int = 0, resisted: Int = 0) {
        self.entry = entry
        self.urges = urges
        self.resisted = resisted
    }
}

public struct WeekdayFigures: Hashable, Sendable, Codable {
    /// 1 = Sunday … 7 = Saturday.
    public var weekday: Int
    public var urges = 0
    public var resisted = 0
    public init(weekday: Int, urges: Int = 0, resisted: Int = 0) {
        self.weekday = weekday
        self.urges = urges
        self.resisted = resisted
    }

    public static let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
}

/// Local hours `start` up to (not including) `end`, `end` may be 24 or wrap (23 → 1).
public struct HourRange: Hashable, Sendable, Codable {
    public var start: Int
    public var end: Int
    public var urges: Int

    public init(start: Int, end: Int, urges: Int) {
        self.start = start
        self.end = end
        self.urges = urges
    }

    /// The two neighbouring hours (wrapping at midnight) with the most urges. On a tie the stretch
    /// that starts at the busier hour wins, then the earliest: urges only at 6 h read "6–8 h", not
    /// "5–7 h", which would name an hour with none as where they start.
    static func peak(of hours: [Int]) -> HourRange? {
        var best: HourRange?
        for h in 0..<24 {
            let n = hours[h] + hours[(h + 1) % 24]
            guard n > 0 else { continue }
            if let b = best, n < b.urges || (n == b.urges && hours[h] <= hours[b.start]) { continue }
            best = HourRange(start: h, end: (h + 2) % 24 == 0 ? 24 : (h + 2) % 24, urges: n)
        }
        return best
    }
}

public struct PersonalBests: Hashable, Sendable, Codable {
    public var mostResisted = 0
    public var mostResistedDay: LocalCalendar.Day?
    public var mostProtectedSeconds: Int64 = 0
    public var mostProtectedDay: LocalCalendar.Day?
    public var longestStreakDays = 0
    public init() {}
}

public struct Milestone: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable {
        case streak
        case protectedHours
    }
    /// Stable across restarts and recomputation: what makes the milestone's event once-only.
    public var key: String
    public var kind: Kind
    public var value: Int
    public var reachedOn: LocalCalendar.Day

    public init(key: String, kind: Kind, value: Int, reachedOn: LocalCalendar.Day) {
        self.key = key
        self.kind = kind
        self.value = value
        self.reachedOn = reachedOn
    }

    /// The event's sentence: celebrates, never compares.
    public var message: String {
        switch kind {
        case .streak: "\(value) days in a row kept your streak. Well done."
        case .protectedHours: "\(value) hours protected in all. That is time you kept for yourself."
        }
    }
}
