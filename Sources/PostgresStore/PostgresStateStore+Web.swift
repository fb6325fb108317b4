import PostgresNIO
import Store

/// The household page's owners, sessions and sign-in tries on the shared server (step "pg3"), so
/// every helper's page sees the same (`WebAccountStore`). Each call is one short transaction on
/// the store's connection; times are the server's clock.
extension PostgresStateStore: WebAccountStore {
    public func ownerPasswordRecord(name: String) throws(StoreError) -> String? {
        try session.run { s in try s.rows("SELECT record FROM web_owners WHERE name = $1", [.text(name)]).first?.text("record") }
    }

    public func ownerPasswordNames() throws(StoreError) -> [String] {
        try session.run { s in try s.rows("SELECT name FROM web_owners ORDER BY name").map { try $0.text("name") } }
    }

    public func setOwnerPasswordRecord(name: String, record: String) throws(StoreError) {
        _ = try session.run { s in
            try s.execute("""
                INSERT INTO web_owners (name, record, set_at) VALUES ($1, $2, clock_timestamp())
                ON CONFLICT (name) DO UPDATE SET record = excluded.record, set_at = excluded.set_at
                """, [.text(name), .text(record)])
        }
    }

    public func findWebSession(id: String, idleMilliseconds: Int64) throws(StoreError) -> WebSessionRecord? {
        try session.run { s in
            // One statement: found, not idle too long, and seen now. An idle one stays until the
            // next new session or retention deletes it; it is never returned.
            try s.rows("""
                UPDATE web_sessions SET last_seen = \(Self.serverMilliseconds)
                WHERE id = $1 AND last_seen > \(Self.serverMilliseconds) - $2
                RETURNING id, csrf, owner_name, owner_uid, owner_gid, flash, exercise_started
                """, [.text(id), .int(idleMilliseconds)]).first.map(Self.webSession)
        }
    }

    public func insertWebSession(_ record: WebSessionRecord, replacing: String?, idleMilliseconds: Int64, maximumCount: Int) throws(StoreError) {
        try session.run { s in
            try s.transaction {
                if let replacing { try s.execute("DELETE FROM web_sessions WHERE id = $1", [.text(replacing)]) }
                try s.execute("DELETE FROM web_sessions WHERE last_seen <= \(Self.serverMilliseconds) - $1", [.int(idleMilliseconds)])
                // Bounded as the page's own table is: a flood of new browsers pushes out the least recently seen.
                let count = try s.rows("SELECT count(*)::bigint AS n FROM web_sessions").first?.int("n") ?? 0
                if count >= Int64(maximumCount) {
                    try s.execute("DELETE FROM web_sessions WHERE id IN (SELECT id FROM web_sessions ORDER BY last_seen, id LIMIT $1)",
                                  [.int(count - Int64(maximumCount) + 1)])
                }
                try s.execute("""
                    INSERT INTO web_sessions (id, csrf, owner_name, owner_uid, owner_gid, flash, last_seen, exercise_started)
                    VALUES ($1, $2, $3, $4, $5, $6, \(Self.serverMilliseconds), $7)
                    """, Self.values(record))
            }
        }
    }

    public func deleteWebSession(id: String) throws(StoreError) {
        _ = try session.run { s in try s.execute("DELETE FROM web_sessions WHERE id = $1", [.text(id)]) }
    }

    public func updateWebSession<T>(id: String, _ body: (inout WebSessionRecord, _ nowMilliseconds: Int64) -> T) throws(StoreError) -> T? {
        try session.run { s in
            try s.transaction {
                guard let row = try s.rows("""
                    SELECT id, csrf, owner_name, owner_uid, owner_gid, flash, exercise_started, \(Self.serverMilliseconds) AS now
                    FROM web_sessions WHERE id = $1 FOR UPDATE
                    """, [.text(id)]).first else { return nil }
                var record = try Self.webSession(row)
                let value = body(&record, try row.int("now"))
                try s.execute("""
                    UPDATE web_sessions SET csrf = $2, owner_name = $3, owner_uid = $4, owner_gid = $5, flash = $6, exercise_started = $7
                    WHERE id = $1
                    """, Self.values(record))
                return value
            }
        }
    }

    public func webSessionCount() throws(StoreError) -> Int {
        try session.run { s in Int(try s.rows("SELECT count(*)::bigint AS n FROM web_sessions").first?.int("n") ?? 0) }
    }

    public func updateSignInTries<T>(name: String, forgetAfterMilliseconds: Int64, maximumTracked: Int,
                                     _ body: (inout SignInTries?, _ nowMilliseconds: Int64) -> T) throws(StoreError) -> T {
        try session.run { s in
            try s.transaction {
                let now = try s.rows("SELECT \(Self.serverMilliseconds) AS now").first?.int("now") ?? 0
                // A row to lock even for a new name, so two helpers counting the same name's first
                // tries at once count both (the second waits for the first's commit, then reads it).
                let added = try s.execute("""
                    INSERT INTO web_sign_in_tries (name, tries, next_at, last_at, owner) VALUES ($1, 0, $2, $2, 0) ON CONFLICT (name) DO NOTHING
                    """, [.text(name), .int(now)])
                if added == 1 {
                    try s.execute("DELETE FROM web_sign_in_tries WHERE last_at < $1 AND name != $2", [.int(now - forgetAfterMilliseconds), .text(name)])
                    let count = try s.rows("SELECT count(*)::bigint AS n FROM web_sign_in_tries").first?.int("n") ?? 0
                    if count > Int64(maximumTracked) {
                        // Names with a password are never the ones dropped; the others, those that may try now first.
                        try s.execute("""
                            DELETE FROM web_sign_in_tries WHERE name IN (SELECT name FROM web_sign_in_tries WHERE owner = 0 AND name != $1
                                ORDER BY (next_at > $2), last_at LIMIT $3)
                            """, [.text(name), .int(now), .int(count - Int64(maximumTracked / 2))])
                    }
                }
                let row = try s.rows("SELECT tries, next_at, last_at, owner FROM web_sign_in_tries WHERE name = $1 FOR UPDATE", [.text(name)]).first
                var tries: SignInTries? = nil
                if added == 0, let row {
                    tries = SignInTries(tries: Int(try row.int("tries")), nextAt: try row.int("next_at"), lastAt: try row.int("last_at"),
                                        owner: try row.bool("owner"))
                }
                let value = body(&tries, now)
                if let tries {
                    try s.execute("UPDATE web_sign_in_tries SET tries = $2, next_at = $3, last_at = $4, owner = $5 WHERE name = $1",
                                  [.text(name), .count(tries.tries), .int(tries.nextAt), .int(tries.lastAt), .bool(tries.owner)])
                } else {
                    try s.execute("DELETE FROM web_sign_in_tries WHERE name = $1", [.text(name)])
                }
                return value
            }
        }
    }

    private static func webSession(_ r: PostgresRandomAccessRow) throws -> WebSessionRecord {
        WebSessionRecord(id: try r.text("id"), csrf: try r.text("csrf"), ownerName: try r.textOrNil("owner_name"),
                         ownerUID: try r.intOrNil("owner_uid").map { UInt32(truncatingIfNeeded: $0) },
                         ownerGID: try r.intOrNil("owner_gid").map { UInt32(truncatingIfNeeded: $0) },
                         flash: try r.textOrNil("flash"), exerciseStartedAt: try r.intOrNil("exercise_started"))
    }

    /// $1…$7 of an insert or update: id, csrf, owner name, uid, gid, flash, exercise start.
    private static func values(_ r: WebSessionRecord) -> [SQLValue] {
        [.text(r.id), .text(r.csrf), .text(r.ownerName), .int(r.ownerUID.map(Int64.init)), .int(r.ownerGID.map(Int64.init)),
         .text(r.flash), .int(r.exerciseStartedAt)]
    }
}
