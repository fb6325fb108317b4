import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import ScrollOffCore
import Store

/// The household's state on a PostgreSQL server that several helpers share (`[store] backend =
/// "postgresql"`, docs/operations.md). Same rows as the SQLite `Store`, same `StateStore` contract,
/// and what a second writer needs besides:
///
/// - Every commit locks the one `household` row (`SELECT … FOR UPDATE`) and checks its version
///   against the one this node's state was loaded at. Commits of all nodes are therefore serial,
///   and one decided on an older state is refused whole (`StoreError.staleSnapshot`): the engine
///   reloads and decides again. So a spend, peek or token of an entry, a grant's end and an hourly
///   award are each decided once, on the state the last commit left, whichever node runs them.
/// - After COMMIT, `pg_notify` (in the transaction, so it is sent only if the commit holds) tells
///   the others; `PostgresListener` reloads them.
/// - Each node keeps its own clock anchor (its own boot clock) and a row in `nodes` for `doctor`.
public final class PostgresStateStore: StateStore, @unchecked Sendable {
    /// The channel of `LISTEN`/`NOTIFY`; the payload is `<version> <node> <instance> <commit ms by
    /// the server's clock>` (a helper before instances sent the same without `<instance>`), or a
    /// listener's own probe, `probe <instance> <sequence>`.
    public static let channel = "scrolloff_household"

    public let node: String
    /// This helper process's own id (random, made when the store is opened): what tells two
    /// helpers apart when they share a node name (`claimNode`), and what a listener drops of the
    /// notifications as its own.
    public let instance: String
    /// Set by `heartbeat` while another instance holds this node's name (this helper yields), or
    /// while another instance contests the name this one holds; nil otherwise.
    package let nameClash = NIOLockedValueBox<NodeNameClash?>(nil)
    /// What the listener found of its `LISTEN` connection, for `doctor`.
    package let listenerHealth = NIOLockedValueBox(ListenerHealth())
    package let session: PostgresSession
    private let known = NIOLockedValueBox<Int64?>(nil)
    private let offset = NIOLockedValueBox<Int64>(0)

    public var location: String { session.location.description }
    public var isShared: Bool { true }
    public var nodeName: String { node }
    public var counters: PostgresCounters { session.counters.withLockedValue { $0 } }
    /// Whether this node's listener has found the database away (changes are refused at once until it is back).
    public var isAway: Bool { session.awaySince.withLockedValue { $0 != nil } }
    /// How far this machine's clock was ahead of the server's at the last `heartbeat`, in ms
    /// (negative: behind): what `HouseholdTimeSource` takes off its wall clock.
    public var clockOffsetMilliseconds: Int64 { offset.withLockedValue { $0 } }
    /// The household version this node's state was loaded at or last committed; nil before `load`.
    public var knownVersion: Int64? { known.withLockedValue { $0 } }

    /// Connects, checks the schema and brings it up to date.
    /// - Parameter node: this helper's name in the household (its host name by default); two
    ///   helpers must not share one, or their clock anchors would overwrite each other.
    public init(location: PostgresLocation, node: String, logger: Logger = Logger(label: "scrolloff.store.postgresql"),
                statementTimeout: TimeAmount = .seconds(5)) throws(StoreError) {
        self.node = node
        instance = Self.makeInstance()
        session = PostgresSession(location: location, logger: logger, statementTimeout: statementTimeout)
        try migrate()
    }

    // MARK: Schema

    private func migrate() throws(StoreError) {
        try session.run { s in
            // One node migrates at a time; the other waits here, then finds the steps applied.
            try s.transaction {
                try s.execute("SELECT pg_advisory_xact_lock(7305418)")
                try s.execute("CREATE TABLE IF NOT EXISTS scrolloff_migrations (id TEXT PRIMARY KEY NOT NULL, applied_at TIMESTAMPTZ NOT NULL)")
                let applied = Set(try s.rows("SELECT id FROM scrolloff_migrations").map { try $0.text("id") })
                let unknown = applied.subtracting(PostgresSchema.identifiers)
                if !unknown.isEmpty { throw StoreError.newerSchema(path: self.location, unknownMigrations: unknown.sorted()) }
                for (id, sql) in PostgresSchema.steps where !applied.contains(id) {
                    try s.script(sql)
                    try s.execute("INSERT INTO scrolloff_migrations (id, applied_at) VALUES ($1, clock_timestamp())", [.text(id)])
                }
            }
        }
    }

    /// The schema steps applied, in the order this build knows them, for `doctor`.
    public func schemaSteps() throws(StoreError) -> [String] {
        try session.run { s in try s.rows("SELECT id FROM scrolloff_migrations ORDER BY applied_at, id").map { try $0.text("id") } }
    }

    // MARK: Load and commit

    public func load() throws(StoreError) -> StoredState {
        let (state, version) = try session.run { s in
            // One consistent view of every table, and the version it is at.
            try s.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let version = try s.rows("SELECT version FROM household WHERE id = 1").first?.int("version") ?? 0
                return (try PostgresLoader(s: s, node: node).load(), version)
            }
        }
        known.withLockedValue { $0 = version }
        return state
    }

    @discardableResult
    public func commit(_ change: StateChange, anchor: ClockAnchor) throws(StoreError) -> CommitReceipt {
        let expected = known.withLockedValue { $0 }
        let (receipt, version) = try session.run { s in
            try s.transaction {
                let current = try s.rows("SELECT version FROM household WHERE id = 1 FOR UPDATE").first?.int("version") ?? 0
                if let expected, current != expected {
                    session.counters.withLockedValue { $0.staleCommits += 1 }
                    throw StoreError.staleSnapshot(location: location)
                }
                var writer = PostgresChangeWriter(s: s)
                for op in change.operations { try writer.apply(op) }
                try s.execute("""
                    INSERT INTO clock_anchors (node, trusted, boot_ns, boot_id) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (node) DO UPDATE SET trusted = excluded.trusted, boot_ns = excluded.boot_ns, boot_id = excluded.boot_id
                    """, [.text(node), .int(anchor.trusted.millisecondsSince1970), .int(Int64(bitPattern: anchor.bootNanoseconds)), .text(anchor.bootID)])
                let next = current + 1
                try s.execute("UPDATE household SET version = $1, node = $2, committed_at = clock_timestamp() WHERE id = 1",
                              [.int(next), .text(node)])
                // The commit's time by the server's clock, the household's one time base, so the
                // receiver's lag does not carry the two machines' clock difference.
                try s.execute("SELECT pg_notify($1, $2 || ' ' || (extract(epoch from clock_timestamp()) * 1000)::bigint)",
                              [.text(Self.channel), .text("\(next) \(node) \(instance)")])
                return (writer.receipt, next)
            }
        }
        known.withLockedValue { $0 = version }
        return receipt
    }

    /// The names the household holds of list `name` (`StateStore.heldListNames`): the latest
    /// committed, read apart from `load` when their revision moved.
    public func heldListNames(_ name: String) throws(StoreError) -> HeldListNames? {
        try session.run { s in
            guard let r = try s.rows("SELECT * FROM held_list_names WHERE name = $1", [.text(name)]).first else { return nil }
            return HeldListNames(summary: try PostgresLoader.heldSummary(r), rules: HeldListNames.rules(ofText: try r.text("rules")))
        }
    }

    /// Whether `version` (from a notification) is newer than the state this node holds.
    public func isNewer(_ version: Int64) -> Bool { known.withLockedValue { $0.map { version > $0 } ?? true } }

    // MARK: Nodes and the time base

    /// Records this node as seen now and returns how far this machine's clock is from the
    /// database server's (positive: this clock is ahead), measured at the middle of the round trip.
    @discardableResult
    /// - Parameter localClock: this machine's wall clock (a test moves it).
    public func heartbeat(localClock: () -> Date = Date.init) throws(StoreError) -> Int64 {
        try session.run { s in
            let sent = localClock()
            let server = try s.rows("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS ms").first?.int("ms") ?? 0
            let received = localClock()
            let local = Int64((sent.timeIntervalSince1970 + received.timeIntervalSince1970) / 2 * 1000)
            let offset = local - server
            // Only while this instance holds the name (or it is free or stale): a helper that
            // finds it held by another reports the clash instead of overwriting the holder's row.
            let held = try s.rows(Self.claimSQL, [.text(node), .int(offset), .text(instance), .text(Self.hostName), .text(""),
                                                  .int(Self.nodeStaleAfter.milliseconds)])
            self.offset.withLockedValue { $0 = offset }
            if let row = held.first {
                let by = try row.text("contested_by")
                let ago = try row.int("contested_ago_ms")
                noteClash(by.isEmpty || ago < 0 || ago > Self.nodeStaleAfter.milliseconds ? nil
                          : NodeNameClash(holds: true, other: NodeHolder(contested: by, millisecondsAgo: ago)))
            } else if let holder = try Self.holder(of: node, s: s) {
                try s.execute("UPDATE nodes SET contested_by = $2, contested_at = clock_timestamp() WHERE node = $1",
                              [.text(node), .text(NodeHolder.contestedText(instance: instance, host: Self.hostName, address: try Self.ownAddress(s)))])
                noteClash(NodeNameClash(holds: false, other: holder))
            }
            return offset
        }
    }

    /// Every node that has reported, with how long ago (by the server's clock) and its clock offset.
    public func nodes() throws(StoreError) -> [(node: String, secondsAgo: Int64, clockOffsetMilliseconds: Int64)] {
        try session.run { s in
            try s.rows("""
                SELECT node, (extract(epoch from clock_timestamp() - seen_at))::bigint AS ago, clock_offset_ms FROM nodes ORDER BY node
                """).map { (try $0.text("node"), try $0.int("ago"), try $0.int("clock_offset_ms")) }
        }
    }

    // MARK: Retention and the once-only marks

    /// The advisory lock a retention run holds for its transaction: of the helpers that run it
    /// (each at its start and once a day), one rolls the old rows up at a time, and a helper that
    /// finds the lock taken leaves the work to its holder.
    package static let retentionLock: Int64 = 7_305_419

    /// How long the household page's sessions and sign-in waits are kept untouched: longer than
    /// the page's own limits (12 h idle, 1 h until a name's wrong passwords are forgotten), which
    /// it applies itself when it reads them; this only takes away what nobody came back for.
    static let webAccountRetention = Span.hours(24)

    /// As `Store.applyRetention` (SPEC §12): per profile, ledger rows, events and ended grants older
    /// than `days` local days are rolled into daily rollups and deleted, focus sessions over by then
    /// deleted; machine-wide events and answered requests for time older than `now - days` deleted,
    /// all in one transaction. Besides, the household page's sessions and sign-in waits left
    /// untouched for a day. Run by one helper at a time (`retentionLock`): a helper that finds
    /// another running it returns an empty report at once (the rows are rolled by the other, whose
    /// deletes the next run sees).
    ///
    /// Rolled-up and deleted rows are history the rules no longer read (a closed grant, an old
    /// event), so the household's version is not bumped and no helper has to reload.
    @discardableResult
    public func applyRetention(now: Instant, days: Int) throws(StoreError) -> RetentionReport {
        try session.run { s in
            try s.transaction {
                guard try s.rows("SELECT pg_try_advisory_xact_lock($1) AS taken", [.int(Self.retentionLock)]).first?["taken"].decode(Bool.self) == true
                else { return SharedColumns.noRetention }
                var report = SharedColumns.noRetention
                let age = Span.hours(24 * Int64(days))
                for profile in try s.rows("SELECT name FROM profiles ORDER BY name").map({ try $0.text("name") }) {
                    let calendar = try PostgresTally.calendar(of: profile, s: s)
                    let cutoff = calendar.startOfDay(calendar.day(of: now - age))
                    let rolled = try PostgresTally(s: s, profile: profile).byDay(before: cutoff, calendar: calendar)
                    for t in rolled.values { try Self.addRollup(t, profile: profile, s: s) }
                    report.daysRolledUp += rolled.count
                    let args: [SQLValue] = [.text(profile), .int(cutoff.millisecondsSince1970)]
                    report.ledgerRowsDeleted += try s.execute("DELETE FROM ledger WHERE profile = $1 AND time < $2", args)
                    report.eventsDeleted += try s.execute("DELETE FROM events WHERE profile = $1 AND time < $2", args)
                    report.grantsDeleted += try s.execute("DELETE FROM grants WHERE profile = $1 AND ended_at IS NOT NULL AND ended_at < $2", args)
                    report.focusSessionsDeleted += try s.execute(#"DELETE FROM focus_sessions WHERE profile = $1 AND "end" < $2"#, args)
                }
                let cut: [SQLValue] = [.int((now - age).millisecondsSince1970)]
                report.eventsDeleted += try s.execute("DELETE FROM events WHERE profile IS NULL AND time < $1", cut)
                report.timeRequestsDeleted += try s.execute("DELETE FROM time_requests WHERE status != 'pending' AND answered_at < $1", cut)
                // By the server's clock, as the page's own times are (`WebAccountStore`).
                let idle: [SQLValue] = [.int(Self.webAccountRetention.milliseconds)]
                try s.execute("DELETE FROM web_sessions WHERE last_seen < \(Self.serverMilliseconds) - $1", idle)
                try s.execute("DELETE FROM web_sign_in_tries WHERE last_at < \(Self.serverMilliseconds) - $1", idle)
                return report
            }
        }
    }

    /// One day's totals added to its rollup rows (as `Store.addRollup`): a day rolled in two runs adds up.
    private static func addRollup(_ t: DailyTotals, profile: String, s: Statements) throws {
        let day = SharedColumns.day(t.day)
        try s.execute("""
            INSERT INTO daily_rollups (profile, day, urges, resisted, open_seconds, spent_seconds, earned_seconds, peeks, tokens,
            ledger_delta_seconds, rolled_up) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1)
            ON CONFLICT (profile, day) DO UPDATE SET urges = daily_rollups.urges + excluded.urges,
            resisted = daily_rollups.resisted + excluded.resisted, open_seconds = daily_rollups.open_seconds + excluded.open_seconds,
            spent_seconds = daily_rollups.spent_seconds + excluded.spent_seconds, earned_seconds = daily_rollups.earned_seconds + excluded.earned_seconds,
            peeks = daily_rollups.peeks + excluded.peeks, tokens = daily_rollups.tokens + excluded.tokens,
            ledger_delta_seconds = daily_rollups.ledger_delta_seconds + excluded.ledger_delta_seconds, rolled_up = 1
            """, [.text(profile), .text(day), .count(t.urges), .count(t.resisted), .int(t.openSeconds), .int(t.spentSeconds),
                  .int(t.earnedSeconds), .count(t.peeks), .count(t.tokens), .int(t.ledgerDeltaSeconds)])
        for (hour, urges) in t.hourUrges.enumerated() where urges > 0 {
            try s.execute("""
                INSERT INTO daily_rollup_hours (profile, day, hour, urges) VALUES ($1, $2, $3, $4)
                ON CONFLICT (profile, day, hour) DO UPDATE SET urges = daily_rollup_hours.urges + excluded.urges
                """, [.text(profile), .text(day), .count(hour), .count(urges)])
        }
        for (entry, urges) in t.entryUrges {
            try s.execute("""
                INSERT INTO daily_rollup_entries (profile, day, entry, urges, resisted) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (profile, day, entry) DO UPDATE SET urges = daily_rollup_entries.urges + excluded.urges,
                resisted = daily_rollup_entries.resisted + excluded.resisted
                """, [.text(profile), .text(day), .text(entry), .count(urges), .count(t.entryResisted[entry] ?? 0)])
        }
    }

    /// The database server's clock in milliseconds, as SQL: the one time base of what the helpers share.
    static let serverMilliseconds = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

    @discardableResult
    public func recordOnce(key: String, event: StoredEvent) throws(StoreError) -> Bool {
        guard let profile = event.profile else { return false }
        return try session.run { s in
            try s.transaction {
                // The mark's primary key decides: of two nodes recording the same milestone, one inserts.
                let marked = try s.execute("INSERT INTO insight_marks (profile, key, time) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                                           [.text(profile), .text(key), .int(event.time.millisecondsSince1970)])
                guard marked == 1 else { return false }
                try PostgresChangeWriter.insertEvent(event, s: s)
                return true
            }
        }
    }

    public func isMarked(key: String, profile: String) throws(StoreError) -> Bool {
        try session.run { s in
            !(try s.rows("SELECT 1 AS one FROM insight_marks WHERE profile = $1 AND key = $2", [.text(profile), .text(key)]).isEmpty)
        }
    }

    public func latestEvent(kind: EventKind, profile: String) throws(StoreError) -> StoredEvent? {
        try session.run { s in
            try s.rows("SELECT * FROM events WHERE profile = $1 AND kind = $2 ORDER BY time DESC, id DESC LIMIT 1",
                       [.text(profile), .text(kind.rawValue)]).first.map(PostgresLoader.event)
        }
    }

    public func events(since: Instant?, profile: String?, kinds: Set<EventKind>?) throws(StoreError) -> [StoredEvent] {
        try session.run { s in
            try s.rows("""
                SELECT * FROM events WHERE time >= $1 AND ($2::text IS NULL OR profile = $2 OR profile IS NULL) ORDER BY time, id
                """, [.int(since?.millisecondsSince1970 ?? Int64.min), .text(profile)]).compactMap { r in
                let e = try PostgresLoader.event(r)
                if let kinds, !kinds.contains(e.kind) { return nil }
                return e
            }
        }
    }

    // MARK: Reports

    public func dailyTotals(profile: String) throws(StoreError) -> [DailyTotals] {
        try session.run { s in try PostgresTally(s: s, profile: profile).dailyTotals() }
    }

    public func exportRows(profiles: Set<String>?) throws(StoreError) -> [ExportRow] {
        let rows = try session.run { s in
            try s.rows("""
                SELECT 'ledger' AS record, id, time, profile, reason AS what, delta_seconds AS delta, entry, NULL::text AS client_ip,
                       note AS text, NULL::text AS payload
                FROM ledger
                UNION ALL
                SELECT 'event', id, time, profile, kind, NULL, entry, client_ip, message, payload FROM events
                ORDER BY time, record DESC, id
                """).map { r in
                ExportRow(record: ExportRow.Record(rawValue: try r.text("record")) ?? .event, id: try r.int("id"),
                          time: Instant(millisecondsSince1970: try r.int("time")), profile: try r.textOrNil("profile"), what: try r.text("what"),
                          deltaSeconds: try r.intOrNil("delta"), entry: try r.textOrNil("entry"), clientIP: try r.textOrNil("client_ip"),
                          text: try r.textOrNil("text"), payload: try r.textOrNil("payload"))
            }
        }
        guard let profiles else { return rows }
        return rows.filter { $0.profile.map(profiles.contains) ?? false }
    }

    public func exportCSV(profiles: Set<String>?) throws(StoreError) -> String {
        var out = SharedColumns.csvLine(Store.csvHeader)
        for r in try exportRows(profiles: profiles) {
            out += SharedColumns.csvLine([r.record.rawValue, String(r.id), r.timeUTC, String(r.time.millisecondsSince1970), r.profile ?? "",
                                          r.what, r.deltaSeconds.map(String.init) ?? "", r.entry ?? "", r.clientIP ?? "", r.text ?? ""])
        }
        return out
    }

    /// SPEC §4 per profile: the balance (sum of the wallet's batches) against the ledger's sum, and
    /// the lowest running sum in commit order.
    public func verifyLedger() throws(StoreError) -> [LedgerBalance] {
        try session.run { s in
            try s.rows("""
                SELECT p.name AS profile,
                    COALESCE((SELECT SUM(remaining) FROM wallet_batches b WHERE b.profile = p.name), 0)::bigint AS balance,
                    (COALESCE((SELECT SUM(delta_seconds) FROM ledger l WHERE l.profile = p.name), 0)
                        + COALESCE((SELECT SUM(ledger_delta_seconds) FROM daily_rollups r WHERE r.profile = p.name AND rolled_up = 1), 0))::bigint AS ledger_sum,
                    LEAST(COALESCE((SELECT MIN(r) FROM (SELECT SUM(delta_seconds) OVER (ORDER BY id) AS r FROM ledger l WHERE l.profile = p.name) x), 0), 0)::bigint AS lowest
                FROM profiles p ORDER BY p.name
                """).map { r in
                SharedColumns.ledgerBalance(profile: try r.text("profile"), balance: try r.int("balance"), ledgerSum: try r.int("ledger_sum"),
                                           lowest: try r.int("lowest"))
            }
        }
    }

    /// For `doctor`, which lists these as the database's problems: the server answers (or this
    /// throws, saying so), the schema is one this build knows whole, the household row exists, the
    /// last notification from another helper came within a second, every other helper was seen in
    /// the last 30 s, and no helper's clock is more than 2 s from the server's.
    public func integrityCheck() throws(StoreError) -> IntegrityReport {
        let steps = try schemaSteps()
        var problems: [String] = []
        let missing = PostgresSchema.identifiers.filter { !steps.contains($0) }
        if !missing.isEmpty { problems.append("schema steps missing: \(missing.joined(separator: ", ")); start a helper of this build to add them") }
        let household = try session.run { s in try s.rows("SELECT version FROM household WHERE id = 1").count }
        if household != 1 { problems.append("the household row is missing; restore the database from a backup or copy the state in again") }
        if let clash = nameClash.withLockedValue({ $0 }) { problems.append(clash.problem(node: node, instance: instance)) }
        problems += listenerHealth.withLockedValue { $0 }.problems()
        if let lag = counters.lastNotifyLagMilliseconds, lag > 1000 {
            problems.append("the last change from another helper arrived \(lag) ms after its commit (more than 1 s); check the network to the database and the helpers' clocks")
        }
        for n in try nodes() {
            if n.node != node, n.secondsAgo > 30 {
                problems.append("helper \(n.node) was last seen \(n.secondsAgo) s ago; it is stopped or cannot reach the database")
            }
            if abs(n.clockOffsetMilliseconds) > 2000 {
                problems.append("helper \(n.node)'s clock is \(abs(n.clockOffsetMilliseconds)) ms \(n.clockOffsetMilliseconds > 0 ? "ahead of" : "behind") the database server's; set up NTP (systemd-timesyncd or chrony) on both")
            }
        }
        return SharedColumns.integrityReport(problems: problems)
    }
}

extension PostgresStateStore {
    /// Open grants per profile and entry, for the invariant checks (`doctor` and the tests).
    public func openGrantsPerEntry() throws(StoreError) -> [(profile: String, entry: String, count: Int)] {
        try session.run { s in
            try s.rows("SELECT profile, entry, count(*)::bigint AS n FROM grants WHERE ended_at IS NULL GROUP BY profile, entry ORDER BY profile, entry")
                .map { (try $0.text("profile"), try $0.text("entry"), Int(try $0.int("n"))) }
        }
    }

    /// Rows per table, for `store copy`'s check and the tests.
    public func rowCount(_ table: String) throws(StoreError) -> Int {
        guard PostgresSchema.copiedTables.contains(table) else { throw .invalidChange("there is no table \(table)") }
        return try session.run { s in Int(try s.rows("SELECT count(*)::bigint AS n FROM \(table)").first?.int("n") ?? 0) }
    }
}
