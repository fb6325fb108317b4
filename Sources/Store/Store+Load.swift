import GRDB
import ScrollOffCore

extension Store {
    /// Everything the helper needs to rebuild the core after a restart: profiles with their rules,
    /// the wallet and ladder state exactly as last committed, plans, alternatives, list sources and
    /// the clock anchor for the trusted clock (SPEC §11).
    public func load() throws(StoreError) -> StoredState {
        try read { db in
            let anchor = try Row.fetchOne(db, sql: "SELECT trusted, boot_ns, boot_id FROM clock_anchor WHERE id = 1").map { row in
                ClockAnchor(trusted: Instant(millisecondsSince1970: row["trusted"]),
                            bootNanoseconds: UInt64(bitPattern: row["boot_ns"]), bootID: row["boot_id"])
            }
            let names = try String.fetchAll(db, sql: "SELECT name FROM profiles ORDER BY name")
            return StoredState(
                anchor: anchor,
                profiles: try names.map { try Loader(db: db, name: $0).load() },
                plans: try Row.fetchAll(db, sql: "SELECT * FROM plans ORDER BY id").map { r in
                    Plan(id: r["id"], profile: r["profile"], when: r["when_text"], then: r["then_text"],
                         created: Instant(millisecondsSince1970: r["created"]), archived: r["archived"], shownCount: r["shown_count"])
                },
                alternatives: try Row.fetchAll(db, sql: "SELECT * FROM alternatives ORDER BY id").map { r in
                    Alternative(id: r["id"], profile: r["profile"], text: r["text"], created: Instant(millisecondsSince1970: r["created"]))
                },
                timeRequests: try Row.fetchAll(db, sql: "SELECT * FROM time_requests ORDER BY id").map { r in
                    guard let status = TimeRequest.Status(rawValue: r["status"]) else {
                        throw StoreError.invalidRow(table: "time_requests", detail: "unknown status of request \(r["id"] as Int64)")
                    }
                    return TimeRequest(id: r["id"], profile: r["profile"], seconds: r["seconds"], note: r["note"],
                                       created: Instant(millisecondsSince1970: r["created"]), status: status,
                                       answeredAt: (r["answered_at"] as Int64?).map { Instant(millisecondsSince1970: $0) },
                                       answeredBy: r["answered_by"], answerNote: r["answer_note"])
                },
                settings: Dictionary(try Row.fetchAll(db, sql: "SELECT key, value FROM helper_settings").map { ($0["key"], $0["value"]) }) { $1 },
                listSources: try Row.fetchAll(db, sql: "SELECT * FROM household_lists ORDER BY name").map { r in
                    try SharedColumns.listSource(name: r["name"], url: r["url"], uid: r["added_by_uid"], gid: r["added_by_gid"],
                                                 added: r["added"], on: r["added_on"])
                },
                // The summary only: the names are read when their revision moves (`heldListNames`).
                heldLists: try Row.fetchAll(db, sql: Self.heldSummarySQL).map(Self.heldSummary))
        }
    }
}

/// Reads one profile's rows back into the core's values.
struct Loader {
    let db: Database
    let name: String

    func load() throws -> StoredProfile {
        StoredProfile(settings: try settings(), entries: try entries(), blocks: try blocks(), schedules: try schedules(),
                      focusSessions: try focusSessions(), openGrants: try openGrants(), account: try account(),
                      pause: try pause(), allowances: try allowances())
    }

    private func pause() throws -> Pause? {
        try Row.fetchOne(db, sql: #"SELECT * FROM pauses WHERE profile = ?"#, arguments: [name]).map { r in
            Pause(start: Instant(millisecondsSince1970: r["start"]), end: Instant(millisecondsSince1970: r["end"]),
                  reason: r["reason"], by: r["paused_by"])
        }
    }

    private func allowances() throws -> [Allowance] {
        try rows("SELECT * FROM allowances WHERE profile = ? ORDER BY entries").map { r in
            Allowance(entries: try JSONCoding.decode([String].self, from: r["entries"], table: "allowances", column: "entries").map { EntryID($0) },
                      secondsByWeekday: try JSONCoding.decode([Int64].self, from: r["seconds"], table: "allowances", column: "seconds"),
                      cooldownUntil: Columns.instant(r["cooldown_until"]))
        }
    }

    private func settings() throws -> ProfileSettings {
        guard let r = try Row.fetchOne(db, sql: "SELECT * FROM profiles WHERE name = ?", arguments: [name]) else {
            throw StoreError.invalidRow(table: "profiles", detail: "\(name) vanished while loading")
        }
        guard let preset = Preset(rawValue: r["preset"]) else {
            throw StoreError.invalidRow(table: "profiles", detail: "unknown preset of \(name)")
        }
        return ProfileSettings(
            name: r["name"],
            clientCIDRs: try JSONCoding.decode([String].self, from: r["client_cidrs"], table: "profiles", column: "client_cidrs"),
            timeZoneID: r["time_zone"], preset: preset,
            overrides: try JSONCoding.decode(KnobOverrides.self, from: r["knob_overrides"], table: "profiles", column: "knob_overrides"),
            ownerUIDs: try JSONCoding.decode([UInt32].self, from: r["owner_uids"], table: "profiles", column: "owner_uids"),
            memberUIDs: try JSONCoding.decode([UInt32].self, from: r["member_uids"], table: "profiles", column: "member_uids"))
    }

    private func rows(_ sql: String) throws -> [Row] { try Row.fetchAll(db, sql: sql, arguments: [name]) }

    private func entries() throws -> [StoredEntry] {
        try rows("SELECT * FROM entries WHERE profile = ? ORDER BY id").map { r in
            guard let kind = StoredEntry.Kind(rawValue: r["kind"]) else {
                throw StoreError.invalidRow(table: "entries", detail: "unknown kind \(String(describing: r["kind"] as String?))")
            }
            return StoredEntry(id: EntryID(r["id"] as String), kind: kind, added: Instant(millisecondsSince1970: r["added"]))
        }
    }

    private func blocks() throws -> [Block] {
        try rows("SELECT * FROM blocks WHERE profile = ? ORDER BY entry").map { r in
            Block(entry: EntryID(r["entry"] as String), created: Instant(millisecondsSince1970: r["created"]),
                  cooldownUntil: Instant(millisecondsSince1970: r["cooldown_until"]), reason: r["reason"])
        }
    }

    private func schedules() throws -> [Schedule] {
        try rows("SELECT * FROM schedules WHERE profile = ? ORDER BY name").map { r in
            guard let start = LocalTime(hour: (r["start_minute"] as Int) / 60, minute: (r["start_minute"] as Int) % 60),
                  let end = LocalTime(hour: (r["end_minute"] as Int) / 60, minute: (r["end_minute"] as Int) % 60)
            else { throw StoreError.invalidRow(table: "schedules", detail: "window minutes out of range") }
            return Schedule(
                name: r["name"], start: start, end: end, days: Weekdays(rawValue: UInt8(truncatingIfNeeded: r["days"] as Int)),
                timeZoneID: r["time_zone"], entries: try Columns.entries(r["entries"], table: "schedules"),
                kind: try Columns.scheduleKind(r["kind"], strict: r["strict"]), reason: r["reason"], enabled: r["enabled"],
                cooldownUntil: Columns.instant(r["cooldown_until"]))
        }
    }

    private func focusSessions() throws -> [FocusSession] {
        try rows(#"SELECT * FROM focus_sessions WHERE profile = ? ORDER BY id"#).map { r in
            let start = Instant(millisecondsSince1970: r["start"])
            let end = Instant(millisecondsSince1970: r["end"])
            do {
                return try FocusSession(id: r["id"], entries: try Columns.entries(r["entries"], table: "focus_sessions"),
                                        startingAt: start, length: end - start, reason: r["reason"])
            } catch let e as ScheduleError {
                throw StoreError.invalidRow(table: "focus_sessions", detail: e.message)
            }
        }
    }

    private func openGrants() throws -> [Grant] {
        try rows(#"SELECT * FROM grants WHERE profile = ? AND ended_at IS NULL ORDER BY id"#).map(Self.grant)
    }

    static func grant(_ r: Row) throws -> Grant {
        guard let kind = Grant.Kind(rawValue: r["kind"]) else {
            throw StoreError.invalidRow(table: "grants", detail: "unknown kind")
        }
        return Grant(id: r["id"], entry: EntryID(r["entry"] as String), kind: kind,
                     start: Instant(millisecondsSince1970: r["start"]), end: Instant(millisecondsSince1970: r["end"]), task: r["task"])
    }

    private func account() throws -> CreditAccountState? {
        guard let r = try Row.fetchOne(db, sql: "SELECT * FROM wallet_state WHERE profile = ?", arguments: [name]) else { return nil }
        var w = WalletState(asOf: Instant(millisecondsSince1970: r["as_of"]))
        w.starterGranted = r["starter_granted"]
        w.blockInForce = r["block_in_force"]
        w.streakStart = Columns.instant(r["streak_start"])
        w.frozenUntil = Columns.instant(r["frozen_until"])
        if let id = r["spend_grant_id"] as Int64?, let entry = r["spend_entry"] as String?, let settled = r["spend_settled_through"] as Int64? {
            w.spend = try WalletState.RunningSpend.make(grantID: id, entry: EntryID(entry), settledThrough: Instant(millisecondsSince1970: settled),
                                                        limitEnd: Columns.instant(r["spend_limit_end"]))
        }
        w.unchargedMilliseconds = r["uncharged_ms"]
        w.nextGrantID = r["next_grant_id"]
        w.day = try (r["day"] as String?).map { text throws(StoreError) in try Columns.day(text, table: "wallet_state") }
        w.earnedToday = r["earned_today"]
        w.spentToday = r["spent_today"]
        let byEntry = try JSONCoding.decode([String: Int64].self, from: r["spent_today_by_entry"], table: "wallet_state", column: "spent_today_by_entry")
        w.spentTodayByEntry = Dictionary(uniqueKeysWithValues: byEntry.map { (EntryID($0.key), $0.value) })
        w.allowanceDay = try (r["allowance_day"] as String?).map { text throws(StoreError) in try Columns.day(text, table: "wallet_state") }
        w.allowanceGranted = try JSONCoding.decode([String: Int64].self, from: r["allowance_granted"], table: "wallet_state", column: "allowance_granted")
        w.grantsInUse = try openGrants()
        w.batches = try rows("SELECT * FROM wallet_batches WHERE profile = ? ORDER BY position").map { b in
            CreditBatch(origin: try Columns.origin(b["origin"], day: b["earned_day"]), createdAt: Instant(millisecondsSince1970: b["created_at"]),
                        expiresAt: Columns.instant(b["expires_at"]), remaining: b["remaining"], earmark: (b["earmark"] as String?).map { EntryID($0) },
                        allowanceKey: b["allowance_key"])
        }
        return CreditAccountState(wallet: w, ladder: try ladder())
    }

    private func ladder() throws -> LadderState {
        var l = LadderState()
        if let r = try Row.fetchOne(db, sql: "SELECT * FROM peeks WHERE profile = ? ORDER BY day DESC LIMIT 1", arguments: [name]) {
            l.day = try Columns.day(r["day"], table: "peeks")
            l.freePeeksUsed = r["free_used"]
            l.paidPeeksUsed = r["paid_used"]
        }
        if let r = try Row.fetchOne(db, sql: "SELECT * FROM token_months WHERE profile = ? ORDER BY month DESC LIMIT 1", arguments: [name]) {
            l.month = try Columns.month(r["month"], table: "token_months")
            l.tokensUsed = r["used"]
        }
        for r in try rows("SELECT entry, until FROM bypass_lockouts WHERE profile = ?") {
            l.lockedUntil[EntryID(r["entry"] as String)] = Instant(millisecondsSince1970: r["until"])
        }
        return l
    }
}

extension Store {
    static let heldSummarySQL = "SELECT name, name_count, revision, held_until, reason, held_since FROM held_list_names ORDER BY name"

    static func heldSummary(_ r: Row) throws -> HeldListSummary {
        try SharedColumns.heldListSummary(name: r["name"], count: r["name_count"], revision: r["revision"], until: r["held_until"],
                                          reason: r["reason"], since: r["held_since"])
    }

    /// The names the household holds of list `name`, with their summary (`StateStore.heldListNames`).
    public func heldListNames(_ name: String) throws(StoreError) -> HeldListNames? {
        try read { db in
            guard let r = try Row.fetchOne(db, sql: "SELECT * FROM held_list_names WHERE name = ?", arguments: [name]) else { return nil }
            return HeldListNames(summary: try Self.heldSummary(r), rules: HeldListNames.rules(ofText: r["rules"]))
        }
    }
}
