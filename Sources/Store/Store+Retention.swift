import GRDB
import ScrollOffCore

/// What one retention run did.
public struct RetentionReport: Hashable, Sendable {
    public var daysRolledUp = 0
    public var ledgerRowsDeleted = 0
    public var eventsDeleted = 0
    public var grantsDeleted = 0
    public var focusSessionsDeleted = 0
    public var timeRequestsDeleted = 0
}

extension Store {
    /// SPEC §12: "Ledger and events kept 90 days".
    public static let retention = 90

    /// Rolls ledger rows, events and ended grants (and drops focus sessions and answered requests
    /// for time) older than `days` local days into daily rollups and deletes them, all in one transaction: a crash leaves either everything raw or everything
    /// rolled, never a day counted twice or lost. Plans are never deleted (SPEC §12).
    ///
    /// Per profile the cut is the local midnight starting the day `days` days before `now`, so a day
    /// is rolled whole. Machine-wide events (no profile) are cut at `now - days` exactly.
    @discardableResult
    public func applyRetention(now: Instant, days: Int = Store.retention) throws(StoreError) -> RetentionReport {
        try write { db in
            var report = RetentionReport()
            let age = Span.hours(24 * Int64(days))
            for profile in try String.fetchAll(db, sql: "SELECT name FROM profiles") {
                let calendar = try ProfileCalendars.calendar(of: profile, in: db)
                let cutoff = calendar.startOfDay(calendar.day(of: now - age))
                let rolled = try RawTally(db: db, profile: profile, calendar: calendar).byDay(before: cutoff)
                for t in rolled.values { try Self.addRollup(t, profile: profile, db: db) }
                report.daysRolledUp += rolled.count
                let args: StatementArguments = [profile, cutoff.millisecondsSince1970]
                try db.execute(sql: "DELETE FROM ledger WHERE profile = ? AND time < ?", arguments: args)
                report.ledgerRowsDeleted += db.changesCount
                try db.execute(sql: "DELETE FROM events WHERE profile = ? AND time < ?", arguments: args)
                report.eventsDeleted += db.changesCount
                try db.execute(sql: "DELETE FROM grants WHERE profile = ? AND ended_at IS NOT NULL AND ended_at < ?", arguments: args)
                report.grantsDeleted += db.changesCount
                // Focus sessions over for 90 days decide nothing any more (SPEC §2 one-off windows).
                try db.execute(sql: #"DELETE FROM focus_sessions WHERE profile = ? AND "end" < ?"#, arguments: args)
                report.focusSessionsDeleted += db.changesCount
            }
            let cut: StatementArguments = [(now - age).millisecondsSince1970]
            try db.execute(sql: "DELETE FROM events WHERE profile IS NULL AND time < ?", arguments: cut)
            report.eventsDeleted += db.changesCount
            // SPEC §9a: answered requests for time go with the events that tell of them (their
            // approval's ledger row is rolled up above), cut at `now - days`. A pending request
            // never gets this old: it expires first (`HelperEngine.pendingRequestLifetime`).
            // Exercise outcomes stay: the lifetime figures and personal bests count them (issue
            // 16, `DailyTotals`), and they are a row per finished 2-minute exercise at most.
            try db.execute(sql: "DELETE FROM time_requests WHERE status != 'pending' AND answered_at < ?", arguments: cut)
            report.timeRequestsDeleted += db.changesCount
            return report
        }
    }

    private static func addRollup(_ t: DailyTotals, profile: String, db: Database) throws {
        try db.execute(sql: """
            INSERT INTO daily_rollups (profile, day, urges, resisted, open_seconds, spent_seconds, earned_seconds, peeks, tokens,
            ledger_delta_seconds, rolled_up) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
            ON CONFLICT (profile, day) DO UPDATE SET urges = urges + excluded.urges, resisted = resisted + excluded.resisted,
            open_seconds = open_seconds + excluded.open_seconds, spent_seconds = spent_seconds + excluded.spent_seconds,
            earned_seconds = earned_seconds + excluded.earned_seconds, peeks = peeks + excluded.peeks, tokens = tokens + excluded.tokens,
            ledger_delta_seconds = ledger_delta_seconds + excluded.ledger_delta_seconds, rolled_up = 1
            """, arguments: [profile, Columns.day(t.day), t.urges, t.resisted, t.openSeconds, t.spentSeconds, t.earnedSeconds,
                             t.peeks, t.tokens, t.ledgerDeltaSeconds])
        for (hour, urges) in t.hourUrges.enumerated() where urges > 0 {
            try db.execute(sql: """
                INSERT INTO daily_rollup_hours (profile, day, hour, urges) VALUES (?, ?, ?, ?)
                ON CONFLICT (profile, day, hour) DO UPDATE SET urges = urges + excluded.urges
                """, arguments: [profile, Columns.day(t.day), hour, urges])
        }
        for (entry, urges) in t.entryUrges {
            try db.execute(sql: """
                INSERT INTO daily_rollup_entries (profile, day, entry, urges, resisted) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (profile, day, entry) DO UPDATE SET urges = urges + excluded.urges, resisted = resisted + excluded.resisted
                """, arguments: [profile, Columns.day(t.day), entry, urges, t.entryResisted[entry] ?? 0])
        }
    }
}
