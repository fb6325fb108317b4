import GRDB
import ScrollOffCore

extension EventKind {
    /// A SPEC §7 milestone reached (7/30/60/100-day streak, 100 h protected), written once.
    public static let milestone: EventKind = "milestone"
    /// SPEC §7: the weekly digest, Sunday 19:00 local, written once per week.
    public static let weeklyDigest: EventKind = "weeklyDigest"
}

extension Store {
    /// Writes `event` only if `key` was never marked for `profile`, mark and event in one
    /// transaction: a milestone or a week's digest is recorded once, whatever restarts or
    /// recomputations follow (the mark outlives the 90-day purge of the event).
    /// - Returns: whether the event was written now.
    @discardableResult
    public func recordOnce(key: String, event: StoredEvent) throws(StoreError) -> Bool {
        guard let profile = event.profile else { return false }
        return try write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO insight_marks (profile, key, time) VALUES (?, ?, ?)",
                           arguments: [profile, key, event.time.millisecondsSince1970])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: """
                INSERT INTO events (profile, time, kind, entry, client_ip, message, payload) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [profile, event.time.millisecondsSince1970, event.kind.rawValue, event.entry?.rawValue,
                                 event.clientIP, event.message, event.payload])
            return true
        }
    }

    /// Whether `key` is marked for `profile`.
    public func isMarked(key: String, profile: String) throws(StoreError) -> Bool {
        try read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM insight_marks WHERE profile = ? AND key = ?)",
                              arguments: [profile, key]) ?? false
        }
    }

    /// The newest event of `kind` for `profile` (the latest weekly digest).
    public func latestEvent(kind: EventKind, profile: String) throws(StoreError) -> StoredEvent? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM events WHERE profile = ? AND kind = ? ORDER BY time DESC, id DESC LIMIT 1",
                             arguments: [profile, kind.rawValue]).map { r in
                StoredEvent(id: r["id"], profile: r["profile"], time: Instant(millisecondsSince1970: r["time"]), kind: kind,
                            entry: (r["entry"] as String?).map { EntryID($0) }, clientIP: r["client_ip"],
                            message: r["message"], payload: r["payload"])
            }
        }
    }
}
