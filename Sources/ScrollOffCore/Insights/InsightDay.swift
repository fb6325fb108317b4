/// One local day of a profile in numbers (SPEC §7), as the store keeps it: from raw rows for the
/// last 90 days and from daily rollups before that (SPEC §12), so every figure here survives the purge.
public struct InsightDay: Hashable, Sendable, Codable {
    public var day: LocalCalendar.Day
    /// Urge episodes (SPEC §7: blocked queries for one entry from one client, one per 60 s).
    public var urges = 0
    /// Urges not followed by a grant for that entry within 5 minutes.
    public var resisted = 0
    /// Seconds with a block in force.
    public var protectedSeconds: Int64 = 0
    /// Seconds entries stood open by grants ("time spent"); a grant counts on the day it started.
    public var openSeconds: Int64 = 0
    /// Credit spent: spends and paid peeks.
    public var spentSeconds: Int64 = 0
    /// Credit earned (before the daily cap discarded any).
    public var earnedSeconds: Int64 = 0
    public var peeks = 0
    public var tokens = 0
    /// "Try this first" exercises done (completed, or the bypass avoided).
    public var exercises = 0
    /// Urges by local hour of the wall clock, 0…23 (a DST day has 23 or 25 hours of wall time,
    /// still 24 buckets: the repeated hour counts twice in its bucket, the skipped one stays empty).
    public var hourUrges = [Int](repeating: 0, count: 24)
    /// Urges and resisted urges by entry id.
    public var entryUrges: [String: Int] = [:]
    public var entryResisted: [String: Int] = [:]

    public init(day: LocalCalendar.Day) { self.day = day }

    /// SPEC §7 streak input: no token used and spend ≤ earned.
    public var keepsStreak: Bool { tokens == 0 && spentSeconds <= earnedSeconds }

    /// Adds another tally of the same day (raw rows plus a rollup).
    public mutating func add(_ o: InsightDay) {
        urges += o.urges
        resisted += o.resisted
        protectedSeconds += o.protectedSeconds
        openSeconds += o.openSeconds
        spentSeconds += o.spentSeconds
        earnedSeconds += o.earnedSeconds
        peeks += o.peeks
        tokens += o.tokens
        exercises += o.exercises
        for h in 0..<24 { hourUrges[h] += o.hourUrges[h] }
        for (e, n) in o.entryUrges { entryUrges[e, default: 0] += n }
        for (e, n) in o.entryResisted { entryResisted[e, default: 0] += n }
    }
}
