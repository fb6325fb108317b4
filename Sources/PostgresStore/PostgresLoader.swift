import PostgresNIO
import ScrollOffCore
import Store

/// Reads the household's rows back into the core's values: what `Store.load()` returns, from the
/// same columns. This node's clock anchor is its own row of `clock_anchors`.
struct PostgresLoader {
    let s: Statements
    let node: String

    func load() throws -> StoredState {
        let anchor = try s.rows("SELECT trusted, boot_ns, boot_id FROM clock_anchors WHERE node = $1", [.text(node)]).first.map { r in
            ClockAnchor(trusted: Instant(millisecondsSince1970: try r.int("trusted")),
                        bootNanoseconds: UInt64(bitPattern: try r.int("boot_ns")), bootID: try r.text("boot_id"))
        }
        let names = try s.rows("SELECT name FROM profiles ORDER BY name").map { try $0.text("name") }
        return SharedColumns.storedState(
            anchor: anchor,
            profiles: try names.map { try profile($0) },
            plans: try s.rows("SELECT * FROM plans ORDER BY id").map { r in
                Plan(id: try r.int("id"), profile: try r.text("profile"), when: try r.text("when_text"), then: try r.text("then_text"),
                     created: Instant(millisecondsSince1970: try r.int("created")), archived: try r.bool("archived"),
                     shownCount: Int(try r.int("shown_count")))
            },
            alternatives: try s.rows("SELECT * FROM alternatives ORDER BY id").map { r in
                Alternative(id: try r.int("id"), profile: try r.text("profile"), text: try r.text("text"),
                            created: Instant(millisecondsSince1970: try r.int("created")))
            },
            timeRequests: try s.rows("SELECT * FROM time_requests ORDER BY id").map { r in
                guard let status = TimeRequest.Status(rawValue: try r.text("status")) else {
                    throw StoreError.invalidRow(table: "time_requests", detail: "unknown status of request \(try r.int("id"))")
                }
                return TimeRequest(id: try r.int("id"), profile: try r.text("profile"), seconds: try r.int("seconds"), note: try r.text("note"),
                                   created: Instant(millisecondsSince1970: try r.int("created")), status: status,
                                   answeredAt: try r.intOrNil("answered_at").map { Instant(millisecondsSince1970: $0) },
                                   answeredBy: try r.textOrNil("answered_by"), answerNote: try r.textOrNil("answer_note"))
            },
            settings: Dictionary(try s.rows("SELECT key, value FROM helper_settings").map { (try $0.text("key"), try $0.text("value")) }) { $1 },
            listSources: try s.rows("SELECT * FROM household_lists ORDER BY name").map { r in
                try SharedColumns.listSource(name: try r.text("name"), url: try r.text("url"), uid: try r.intOrNil("added_by_uid"),
                                             gid: try r.intOrNil("added_by_gid"), added: try r.int("added"), on: try r.text("added_on"))
            },
            // The summary only: the names are read when their revision moves (`heldListNames`).
            heldLists: try s.rows("SELECT name, name_count, revision, held_until, reason, held_since FROM held_list_names ORDER BY name")
                .map(Self.heldSummary))
    }

    static func heldSummary(_ r: PostgresRandomAccessRow) throws -> HeldListSummary {
        try SharedColumns.heldListSummary(name: try r.text("name"), count: try r.int("name_count"), revision: try r.int("revision"),
                                          until: try r.intOrNil("held_until"), reason: try r.text("reason"), since: try r.int("held_since"))
    }

    private func rows(_ sql: String, _ name: String) throws -> [PostgresRandomAccessRow] { try s.rows(sql, [.text(name)]) }

    private func profile(_ name: String) throws -> StoredProfile {
        guard let r = try rows("SELECT * FROM profiles WHERE name = $1", name).first else {
            throw StoreError.invalidRow(table: "profiles", detail: "\(name) vanished while loading")
        }
        guard let preset = Preset(rawValue: try r.text("preset")) else {
            throw StoreError.invalidRow(table: "profiles", detail: "unknown preset of \(name)")
        }
        let settings = ProfileSettings(
            name: try r.text("name"),
            clientCIDRs: try SharedColumns.decode([String].self, from: try r.text("client_cidrs"), table: "profiles", column: "client_cidrs"),
            timeZoneID: try r.text("time_zone"), preset: preset,
            overrides: try SharedColumns.decode(KnobOverrides.self, from: try r.text("knob_overrides"), table: "profiles", column: "knob_overrides"),
            ownerUIDs: try SharedColumns.decode([UInt32].self, from: try r.text("owner_uids"), table: "profiles", column: "owner_uids"),
            memberUIDs: try SharedColumns.decode([UInt32].self, from: try r.text("member_uids"), table: "profiles", column: "member_uids"))
        let entries = try rows("SELECT * FROM entries WHERE profile = $1 ORDER BY id", name).map { r in
            guard let kind = StoredEntry.Kind(rawValue: try r.text("kind")) else {
                throw StoreError.invalidRow(table: "entries", detail: "unknown kind")
            }
            return StoredEntry(id: EntryID(try r.text("id")), kind: kind, added: Instant(millisecondsSince1970: try r.int("added")))
        }
        let blocks = try rows("SELECT * FROM blocks WHERE profile = $1 ORDER BY entry", name).map { r in
            Block(entry: EntryID(try r.text("entry")), created: Instant(millisecondsSince1970: try r.int("created")),
                  cooldownUntil: Instant(millisecondsSince1970: try r.int("cooldown_until")), reason: try r.textOrNil("reason"))
        }
        let schedules = try rows("SELECT * FROM schedules WHERE profile = $1 ORDER BY name", name).map { r in
            let startMinute = Int(try r.int("start_minute")), endMinute = Int(try r.int("end_minute"))
            guard let start = LocalTime(hour: startMinute / 60, minute: startMinute % 60),
                  let end = LocalTime(hour: endMinute / 60, minute: endMinute % 60)
            else { throw StoreError.invalidRow(table: "schedules", detail: "window minutes out of range") }
            return Schedule(
                name: try r.text("name"), start: start, end: end, days: Weekdays(rawValue: UInt8(truncatingIfNeeded: try r.int("days"))),
                timeZoneID: try r.text("time_zone"), entries: try SharedColumns.entries(try r.text("entries"), table: "schedules"),
                kind: try SharedColumns.scheduleKind(try r.text("kind"), strict: try r.bool("strict")), reason: try r.textOrNil("reason"),
                enabled: try r.bool("enabled"), cooldownUntil: try r.intOrNil("cooldown_until").map { Instant(millisecondsSince1970: $0) })
        }
        let focus = try rows(#"SELECT * FROM focus_sessions WHERE profile = $1 ORDER BY id"#, name).map { r in
            let start = Instant(millisecondsSince1970: try r.int("start"))
            let end = Instant(millisecondsSince1970: try r.int("end"))
            do {
                return try FocusSession(id: try r.int("id"), entries: try SharedColumns.entries(try r.text("entries"), table: "focus_sessions"),
                                        startingAt: start, length: end - start, reason: try r.textOrNil("reason"))
            } catch let e as ScheduleError {
                throw StoreError.invalidRow(table: "focus_sessions", detail: e.message)
            }
        }
        let open = try rows(#"SELECT * FROM grants WHERE profile = $1 AND ended_at IS NULL ORDER BY id"#, name).map(Self.grant)
        var profile = SharedColumns.storedProfile(settings: settings, entries: entries, blocks: blocks, schedules: schedules,
                                                  focusSessions: focus, openGrants: open, account: try account(name, open: open))
        profile.pause = try rows(#"SELECT * FROM pauses WHERE profile = $1"#, name).first.map { r in
            Pause(start: Instant(millisecondsSince1970: try r.int("start")), end: Instant(millisecondsSince1970: try r.int("end")),
                  reason: try r.textOrNil("reason"), by: try r.textOrNil("paused_by"))
        }
        profile.allowances = try rows("SELECT * FROM allowances WHERE profile = $1 ORDER BY entries", name).map { r in
            Allowance(entries: try SharedColumns.decode([String].self, from: try r.text("entries"), table: "allowances", column: "entries").map { EntryID($0) },
                      secondsByWeekday: try SharedColumns.decode([Int64].self, from: try r.text("seconds"), table: "allowances", column: "seconds"),
                      cooldownUntil: try r.intOrNil("cooldown_until").map { Instant(millisecondsSince1970: $0) })
        }
        return profile
    }

    static func grant(_ r: PostgresRandomAccessRow) throws -> Grant {
        guard let kind = Grant.Kind(rawValue: try r.text("kind")) else { throw StoreError.invalidRow(table: "grants", detail: "unknown kind") }
        return Grant(id: try r.int("id"), entry: EntryID(try r.text("entry")), kind: kind, start: Instant(millisecondsSince1970: try r.int("start")),
                     end: Instant(millisecondsSince1970: try r.int("end")), task: try r.textOrNil("task"))
    }

    static func event(_ r: PostgresRandomAccessRow) throws -> StoredEvent {
        StoredEvent(id: try r.int("id"), profile: try r.textOrNil("profile"), time: Instant(millisecondsSince1970: try r.int("time")),
                    kind: EventKind(rawValue: try r.text("kind")), entry: try r.textOrNil("entry").map { EntryID($0) },
                    clientIP: try r.textOrNil("client_ip"), message: try r.textOrNil("message"), payload: try r.textOrNil("payload"))
    }

    private func account(_ name: String, open: [Grant]) throws -> CreditAccountState? {
        guard let r = try rows("SELECT * FROM wallet_state WHERE profile = $1", name).first else { return nil }
        var w = WalletState(asOf: Instant(millisecondsSince1970: try r.int("as_of")))
        w.starterGranted = try r.bool("starter_granted")
        w.blockInForce = try r.bool("block_in_force")
        w.streakStart = try r.intOrNil("streak_start").map { Instant(millisecondsSince1970: $0) }
        w.frozenUntil = try r.intOrNil("frozen_until").map { Instant(millisecondsSince1970: $0) }
        if let id = try r.intOrNil("spend_grant_id"), let entry = try r.textOrNil("spend_entry"), let settled = try r.intOrNil("spend_settled_through") {
            w.spend = try SharedColumns.runningSpend(grantID: id, entry: EntryID(entry), settledThrough: Instant(millisecondsSince1970: settled),
                                                     limitEnd: try r.intOrNil("spend_limit_end").map { Instant(millisecondsSince1970: $0) })
        }
        w.unchargedMilliseconds = try r.int("uncharged_ms")
        w.nextGrantID = try r.int("next_grant_id")
        w.day = try r.textOrNil("day").map { text throws(StoreError) in try SharedColumns.day(text, table: "wallet_state") }
        w.earnedToday = try r.int("earned_today")
        w.spentToday = try r.int("spent_today")
        let byEntry = try SharedColumns.decode([String: Int64].self, from: try r.text("spent_today_by_entry"), table: "wallet_state",
                                               column: "spent_today_by_entry")
        w.spentTodayByEntry = Dictionary(uniqueKeysWithValues: byEntry.map { (EntryID($0.key), $0.value) })
        w.allowanceDay = try r.textOrNil("allowance_day").map { text throws(StoreError) in try SharedColumns.day(text, table: "wallet_state") }
        w.allowanceGranted = try SharedColumns.decode([String: Int64].self, from: try r.text("allowance_granted"), table: "wallet_state",
                                                      column: "allowance_granted")
        w.grantsInUse = open
        w.batches = try rows("SELECT * FROM wallet_batches WHERE profile = $1 ORDER BY position", name).map { b in
            CreditBatch(origin: try SharedColumns.origin(try b.text("origin"), day: try b.textOrNil("earned_day")),
                        createdAt: Instant(millisecondsSince1970: try b.int("created_at")),
                        expiresAt: try b.intOrNil("expires_at").map { Instant(millisecondsSince1970: $0) }, remaining: try b.int("remaining"),
                        earmark: try b.textOrNil("earmark").map { EntryID($0) }, allowanceKey: try b.textOrNil("allowance_key"))
        }
        var l = LadderState()
        if let p = try rows("SELECT * FROM peeks WHERE profile = $1 ORDER BY day DESC LIMIT 1", name).first {
            l.day = try SharedColumns.day(try p.text("day"), table: "peeks")
            l.freePeeksUsed = Int(try p.int("free_used"))
            l.paidPeeksUsed = Int(try p.int("paid_used"))
        }
        if let t = try rows("SELECT * FROM token_months WHERE profile = $1 ORDER BY month DESC LIMIT 1", name).first {
            l.month = try SharedColumns.month(try t.text("month"), table: "token_months")
            l.tokensUsed = Int(try t.int("used"))
        }
        for b in try rows("SELECT entry, until FROM bypass_lockouts WHERE profile = $1", name) {
            l.lockedUntil[EntryID(try b.text("entry"))] = Instant(millisecondsSince1970: try b.int("until"))
        }
        return CreditAccountState(wallet: w, ladder: l)
    }
}
