import GRDB
import ScrollOffCore

/// One profile's ledger invariant (SPEC §4): the balance equals the sum of the ledger and is
/// never negative. Rows rolled into daily rollups by retention count through their day's total.
public struct LedgerBalance: Hashable, Sendable {
    public var profile: String
    /// Sum of the wallet's batches as last committed (0 before the first).
    public var balanceSeconds: Int64
    /// Sum of `delta_seconds` over the ledger, plus the rolled-up days' sums.
    public var ledgerSumSeconds: Int64
    /// The lowest running sum of the ledger in commit order; negative means the balance once was.
    public var lowestRunningSeconds: Int64

    public var isConsistent: Bool {
        balanceSeconds == ledgerSumSeconds && balanceSeconds >= 0 && lowestRunningSeconds >= 0
    }

    /// What is wrong, in words for `doctor`; nil when consistent.
    public var problem: String? {
        if isConsistent { return nil }
        if balanceSeconds != ledgerSumSeconds {
            return "profile \(profile): balance \(balanceSeconds) s but the ledger sums to \(ledgerSumSeconds) s"
        }
        return "profile \(profile): the balance went below zero (lowest \(min(balanceSeconds, lowestRunningSeconds)) s)"
    }
}

extension Store {
    /// Checks the ledger invariant for every profile with one query each way (SPEC §4).
    public func verifyLedger() throws(StoreError) -> [LedgerBalance] {
        try read { db in
            try Row.fetchAll(db, sql: """
                WITH rolled AS (
                    SELECT profile, SUM(ledger_delta_seconds) AS s FROM daily_rollups WHERE rolled_up = 1 GROUP BY profile
                ), running AS (
                    SELECT profile, COALESCE((SELECT s FROM rolled WHERE rolled.profile = ledger.profile), 0)
                        + SUM(delta_seconds) OVER (PARTITION BY profile ORDER BY id) AS r
                    FROM ledger
                )
                SELECT p.name AS profile,
                    COALESCE((SELECT SUM(remaining) FROM wallet_batches b WHERE b.profile = p.name), 0) AS balance,
                    COALESCE((SELECT SUM(delta_seconds) FROM ledger l WHERE l.profile = p.name), 0)
                        + COALESCE((SELECT s FROM rolled WHERE rolled.profile = p.name), 0) AS ledger_sum,
                    MIN(COALESCE((SELECT MIN(r) FROM running WHERE running.profile = p.name), 0),
                        COALESCE((SELECT s FROM rolled WHERE rolled.profile = p.name), 0)) AS lowest
                FROM profiles p ORDER BY p.name
                """).map { r in
                LedgerBalance(profile: r["profile"], balanceSeconds: r["balance"], ledgerSumSeconds: r["ledger_sum"],
                              lowestRunningSeconds: r["lowest"])
            }
        }
    }

    /// The ledger rows of `profile` from `since` on, oldest first, with their ids.
    public func ledger(profile: String, since: Instant? = nil) throws(StoreError) -> [(id: Int64, row: LedgerRow)] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM ledger WHERE profile = ? AND time >= ? ORDER BY id",
                             arguments: [profile, since?.millisecondsSince1970 ?? Int64.min]).map { r in
                guard let reason = LedgerRow.Reason(rawValue: r["reason"]) else {
                    throw StoreError.invalidRow(table: "ledger", detail: "unknown reason")
                }
                return (r["id"], LedgerRow(time: Instant(millisecondsSince1970: r["time"]), deltaSeconds: r["delta_seconds"],
                                           reason: reason, entry: (r["entry"] as String?).map { EntryID($0) }, note: r["note"]))
            }
        }
    }

    /// Events from `since` on, oldest first; `profile` nil = every profile and machine-wide events.
    public func events(since: Instant? = nil, profile: String? = nil, kinds: Set<EventKind>? = nil) throws(StoreError) -> [StoredEvent] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM events WHERE time >= ? AND (? IS NULL OR profile = ? OR profile IS NULL) ORDER BY time, id
                """, arguments: [since?.millisecondsSince1970 ?? Int64.min, profile, profile]).compactMap { r in
                let kind = EventKind(rawValue: r["kind"])
                if let kinds, !kinds.contains(kind) { return nil }
                return StoredEvent(id: r["id"], profile: r["profile"], time: Instant(millisecondsSince1970: r["time"]), kind: kind,
                                   entry: (r["entry"] as String?).map { EntryID($0) }, clientIP: r["client_ip"],
                                   message: r["message"], payload: r["payload"])
            }
        }
    }

    /// Events with a row id above `afterID`, by id, at most `limit`; of `profiles` and the
    /// machine-wide ones (nil: every profile's). The live stream resumes from here (SPEC §12).
    public func events(afterID: Int64, profiles: Set<String>?, limit: Int) throws(StoreError) -> [StoredEvent] {
        try read { db in
            var sql = "SELECT * FROM events WHERE id > ?"
            var arguments: StatementArguments = [afterID]
            if let profiles {
                sql += " AND (profile IS NULL OR profile IN (\(Array(repeating: "?", count: profiles.count).joined(separator: ", "))))"
                arguments += StatementArguments(profiles.sorted())
            }
            sql += " ORDER BY id LIMIT ?"
            arguments += [max(0, limit)]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { r in
                StoredEvent(id: r["id"], profile: r["profile"], time: Instant(millisecondsSince1970: r["time"]),
                            kind: EventKind(rawValue: r["kind"]), entry: (r["entry"] as String?).map { EntryID($0) },
                            clientIP: r["client_ip"], message: r["message"], payload: r["payload"])
            }
        }
    }

    /// The highest event row id ever given (AUTOINCREMENT: ids are never reused, even after the purge).
    public func latestEventID() throws(StoreError) -> Int64 {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'events'") ?? 0
        }
    }

    /// Grants of `profile` that started from `since` on, ended or not, oldest first.
    public func grants(profile: String, since: Instant? = nil) throws(StoreError) -> [Grant] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM grants WHERE profile = ? AND start >= ? ORDER BY id",
                             arguments: [profile, since?.millisecondsSince1970 ?? Int64.min]).map(Loader.grant)
        }
    }

    /// Recorded "try this first" outcomes of `profile` (SPEC §5 step 3), oldest first.
    public func exercises(profile: String) throws(StoreError) -> [ExerciseRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM exercise_sessions WHERE profile = ? ORDER BY id", arguments: [profile]).map { r in
                guard let outcome = ExerciseRecord.Outcome(rawValue: r["outcome"]) else {
                    throw StoreError.invalidRow(table: "exercise_sessions", detail: "unknown outcome")
                }
                return ExerciseRecord(exerciseID: r["exercise_id"], entry: EntryID(r["entry"] as String),
                                      time: Instant(millisecondsSince1970: r["time"]), outcome: outcome)
            }
        }
    }
}
