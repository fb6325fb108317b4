import GRDB
import ScrollOffCore

/// One local day of a profile in numbers (SPEC §7): what daily rollups keep after the raw ledger
/// and events are gone (SPEC §12), and what recent days add up to from the raw rows. The figures
/// are the core's `InsightDay` (one definition of what a day counts); the store adds only the
/// ledger sum it needs to keep the balance equal to the books once the rows are rolled up.
/// Exercises are counted from `exercise_sessions`, which retention keeps.
@dynamicMemberLookup
public struct DailyTotals: Hashable, Sendable {
    /// The day's figures, as the insights read them.
    public var insight: InsightDay
    /// The sum of every ledger row of the day, so the balance still equals the ledger once the
    /// rows are gone.
    public var ledgerDeltaSeconds: Int64 = 0

    public init(day: LocalCalendar.Day) { insight = InsightDay(day: day) }

    public subscript<T>(dynamicMember path: KeyPath<InsightDay, T>) -> T { insight[keyPath: path] }

    public subscript<T>(dynamicMember path: WritableKeyPath<InsightDay, T>) -> T {
        get { insight[keyPath: path] }
        set { insight[keyPath: path] = newValue }
    }

    mutating func add(_ o: DailyTotals) {
        insight.add(o.insight)
        ledgerDeltaSeconds += o.ledgerDeltaSeconds
    }
}

/// Lifetime sums of `DailyTotals` (SPEC §7 personal bests and the 100 h milestone, §12).
public typealias LifetimeTotals = DailyTotals

/// SPEC §7: "Resisted when no grant for that entry follows within 5 minutes."
let resistWindow = Span.minutes(5)

/// Adds up raw ledger rows, urge events and ended grants of one profile by local day.
struct RawTally {
    let db: Database
    let profile: String
    let calendar: LocalCalendar

    /// - Parameter before: only rows strictly before this instant (retention); nil = all rows.
    func byDay(before: Instant?) throws -> [LocalCalendar.Day: DailyTotals] {
        let limit = before?.millisecondsSince1970 ?? Int64.max
        var days: [LocalCalendar.Day: DailyTotals] = [:]
        func add(_ time: Int64, _ change: (inout DailyTotals) -> Void) {
            let day = calendar.day(of: Instant(millisecondsSince1970: time))
            change(&days[day, default: DailyTotals(day: day)])
        }
        for r in try Row.fetchAll(db, sql: "SELECT time, delta_seconds, reason FROM ledger WHERE profile = ? AND time < ?",
                                  arguments: [profile, limit]) {
            let delta: Int64 = r["delta_seconds"]
            let reason = LedgerRow.Reason(rawValue: r["reason"])
            add(r["time"]) { t in
                t.add(ledgerDelta: delta, reason: reason)
            }
        }
        for r in try Row.fetchAll(db, sql: """
            SELECT u.time, u.entry, EXISTS (SELECT 1 FROM grants g WHERE g.profile = u.profile AND g.entry = u.entry
                                   AND g.start >= u.time AND g.start <= u.time + ?) AS opened
            FROM events u WHERE u.profile = ? AND u.kind = ? AND u.time < ?
            """, arguments: [resistWindow.milliseconds, profile, EventKind.urge.rawValue, limit]) {
            let opened: Bool = r["opened"]
            let time: Int64 = r["time"]
            let entry: String = r["entry"] ?? "?"
            let hour = calendar.hour(of: Instant(millisecondsSince1970: time))
            add(time) { t in
                t.urges += 1
                t.hourUrges[hour] += 1
                t.entryUrges[entry, default: 0] += 1
                if !opened {
                    t.resisted += 1
                    t.entryResisted[entry, default: 0] += 1
                }
            }
        }
        for r in try Row.fetchAll(db, sql: """
            SELECT start, ended_at FROM grants WHERE profile = ? AND ended_at IS NOT NULL AND ended_at < ?
            """, arguments: [profile, limit]) {
            let start: Int64 = r["start"], ended: Int64 = r["ended_at"]
            add(start) { $0.openSeconds += max(0, ended - start) / 1000 }
        }
        // Exercise records are never purged, so they are counted here for every day and never rolled up.
        if before == nil {
            for r in try Row.fetchAll(db, sql: "SELECT time FROM exercise_sessions WHERE profile = ? AND outcome != 'skipped'",
                                      arguments: [profile]) {
                add(r["time"]) { $0.exercises += 1 }
            }
        }
        return days
    }
}

extension Store {
    /// Every local day of `profile` with anything recorded, oldest first: rolled-up days from the
    /// rollups, recent days from the raw rows (SPEC §7 stats and streaks, §12).
    public func dailyTotals(profile: String) throws(StoreError) -> [DailyTotals] {
        try read { db in
            let calendar = try ProfileCalendars.calendar(of: profile, in: db)
            var days = try RawTally(db: db, profile: profile, calendar: calendar).byDay(before: nil)
            for r in try Row.fetchAll(db, sql: "SELECT * FROM daily_rollups WHERE profile = ?", arguments: [profile]) {
                let day = try Columns.day(r["day"], table: "daily_rollups")
                days[day, default: DailyTotals(day: day)].add(Self.totals(r, day: day))
            }
            for r in try Row.fetchAll(db, sql: "SELECT day, hour, urges FROM daily_rollup_hours WHERE profile = ?", arguments: [profile]) {
                let day = try Columns.day(r["day"], table: "daily_rollup_hours")
                let hour: Int = r["hour"], urges: Int = r["urges"]
                days[day, default: DailyTotals(day: day)].hourUrges[hour] += urges
            }
            for r in try Row.fetchAll(db, sql: "SELECT day, entry, urges, resisted FROM daily_rollup_entries WHERE profile = ?",
                                      arguments: [profile]) {
                let day = try Columns.day(r["day"], table: "daily_rollup_entries")
                let entry: String = r["entry"], urges: Int = r["urges"], resisted: Int = r["resisted"]
                // Only non-zero counts become keys, as in the raw tally, so a day reads the same before and after its roll-up.
                if urges > 0 { days[day, default: DailyTotals(day: day)].entryUrges[entry, default: 0] += urges }
                if resisted > 0 { days[day, default: DailyTotals(day: day)].entryResisted[entry, default: 0] += resisted }
            }
            return days.values.sorted { $0.day < $1.day }
        }
    }

    /// The sums over every day `profile` has recorded.
    public func lifetimeTotals(profile: String) throws(StoreError) -> LifetimeTotals {
        var total = DailyTotals(day: LocalCalendar.Day(year: 1970, month: 1, day: 1))
        for d in try dailyTotals(profile: profile) { total.add(d) }
        return total
    }

    static func totals(_ r: Row, day: LocalCalendar.Day) -> DailyTotals {
        var t = DailyTotals(day: day)
        t.urges = r["urges"]
        t.resisted = r["resisted"]
        t.protectedSeconds = r["protected_seconds"]
        t.openSeconds = r["open_seconds"]
        t.spentSeconds = r["spent_seconds"]
        t.earnedSeconds = r["earned_seconds"]
        t.peeks = r["peeks"]
        t.tokens = r["tokens"]
        t.ledgerDeltaSeconds = r["ledger_delta_seconds"]
        return t
    }
}

extension DailyTotals {
    /// What one ledger row adds to its day (SPEC §7): every row to the ledger sum, earnings and
    /// spends to their totals, bypasses to the peek and token counts. One rule for both stores.
    package mutating func add(ledgerDelta delta: Int64, reason: LedgerRow.Reason?) {
        ledgerDeltaSeconds += delta
        switch reason {
        case .earn?, .capDiscard?: insight.earnedSeconds += delta
        case .spend?: insight.spentSeconds -= delta
        case .bypassCredit?: insight.spentSeconds -= delta; insight.peeks += 1
        case .bypassFree?: insight.peeks += 1
        case .bypassToken?: insight.tokens += 1
        default: break
        }
    }
}
