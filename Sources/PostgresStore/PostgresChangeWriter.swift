import PostgresNIO
import ScrollOffCore
import Store

/// Turns a `StateChange`'s operations into SQL inside the commit's transaction: the statements of
/// the SQLite `ChangeWriter` in PostgreSQL's words (`RETURNING id` for the ids the database
/// assigns, `ON CONFLICT … DO UPDATE` for `INSERT OR REPLACE`).
struct PostgresChangeWriter {
    let s: Statements
    var receipt = SharedColumns.emptyReceipt
    private var calendars: [String: LocalCalendar] = [:]

    init(s: Statements) { self.s = s }

    private func insert(_ sql: String, _ values: [SQLValue]) throws -> Int64 {
        guard let id = try s.rows(sql + " RETURNING id", values).first?.int("id") else {
            throw StoreError.invalidChange("the database assigned no id")
        }
        return id
    }

    private func requireChange(_ count: Int, _ message: String) throws {
        if count == 0 { throw StoreError.invalidChange(message) }
    }

    @discardableResult
    static func insertEvent(_ e: StoredEvent, s: Statements) throws -> Int64 {
        guard let id = try s.rows("""
            INSERT INTO events (profile, time, kind, entry, client_ip, message, payload) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
            """, [.text(e.profile), .int(e.time.millisecondsSince1970), .text(e.kind.rawValue), .text(e.entry?.rawValue), .text(e.clientIP),
                  .text(e.message), .text(e.payload)]).first?.int("id") else { throw StoreError.invalidChange("the database assigned no id") }
        return id
    }

    mutating func apply(_ op: StateChange.Operation) throws {
        switch op {
        case .saveProfile(let p):
            try s.execute("""
                INSERT INTO profiles (name, client_cidrs, time_zone, preset, knob_overrides, owner_uids, member_uids)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (name) DO UPDATE SET client_cidrs = excluded.client_cidrs, time_zone = excluded.time_zone,
                preset = excluded.preset, knob_overrides = excluded.knob_overrides, owner_uids = excluded.owner_uids,
                member_uids = excluded.member_uids
                """, [.text(p.name), .text(SharedColumns.json(p.clientCIDRs)), .text(p.timeZoneID), .text(p.preset.rawValue),
                      .text(SharedColumns.json(p.overrides)), .text(SharedColumns.json(p.ownerUIDs)), .text(SharedColumns.json(p.memberUIDs))])
            calendars[p.name] = nil
        case .removeProfile(let name):
            try s.execute("DELETE FROM profiles WHERE name = $1", [.text(name)])
        case .saveEntry(let profile, let e):
            try s.execute("""
                INSERT INTO entries (profile, id, kind, added) VALUES ($1, $2, $3, $4)
                ON CONFLICT (profile, id) DO UPDATE SET kind = excluded.kind
                """, [.text(profile), .text(e.id.rawValue), .text(e.kind.rawValue), .int(e.added.millisecondsSince1970)])
        case .removeEntry(let profile, let id):
            try s.execute("DELETE FROM entries WHERE profile = $1 AND id = $2", [.text(profile), .text(id.rawValue)])
        case .saveBlock(let profile, let b):
            try s.execute("""
                INSERT INTO blocks (profile, entry, created, cooldown_until, reason) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (profile, entry) DO UPDATE SET created = excluded.created, cooldown_until = excluded.cooldown_until,
                reason = excluded.reason
                """, [.text(profile), .text(b.entry.rawValue), .int(b.created.millisecondsSince1970), .int(b.cooldownUntil.millisecondsSince1970),
                      .text(b.reason)])
        case .removeBlock(let profile, let entry):
            try s.execute("DELETE FROM blocks WHERE profile = $1 AND entry = $2", [.text(profile), .text(entry.rawValue)])
        case .saveSchedule(let profile, let sc):
            let kind = SharedColumns.scheduleKind(sc.kind)
            try s.execute("""
                INSERT INTO schedules (profile, name, start_minute, end_minute, days, time_zone, kind, strict, entries, reason, enabled,
                cooldown_until) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                ON CONFLICT (profile, name) DO UPDATE SET start_minute = excluded.start_minute, end_minute = excluded.end_minute,
                days = excluded.days, time_zone = excluded.time_zone, kind = excluded.kind, strict = excluded.strict,
                entries = excluded.entries, reason = excluded.reason, enabled = excluded.enabled, cooldown_until = excluded.cooldown_until
                """, [.text(profile), .text(sc.name), .count(sc.start.minuteOfDay), .count(sc.end.minuteOfDay), .count(Int(sc.days.rawValue)),
                      .text(sc.timeZoneID), .text(kind.kind), .bool(kind.strict), .text(SharedColumns.entries(sc.entries)), .text(sc.reason),
                      .bool(sc.enabled), .int(sc.cooldownUntil?.millisecondsSince1970)])
        case .removeSchedule(let profile, let name):
            try s.execute("DELETE FROM schedules WHERE profile = $1 AND name = $2", [.text(profile), .text(name)])
        case .saveFocusSession(let profile, let f):
            try s.execute("""
                INSERT INTO focus_sessions (profile, id, entries, start, "end", reason) VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (profile, id) DO UPDATE SET entries = excluded.entries, start = excluded.start, "end" = excluded."end",
                reason = excluded.reason
                """, [.text(profile), .int(f.id), .text(SharedColumns.entries(f.entries)), .int(f.start.millisecondsSince1970),
                      .int(f.end.millisecondsSince1970), .text(f.reason)])
        case .removeFocusSession(let profile, let id):
            try s.execute("DELETE FROM focus_sessions WHERE profile = $1 AND id = $2", [.text(profile), .int(id)])
        case .appendLedger(let profile, let row):
            receipt.ledgerIDs.append(try insert("""
                INSERT INTO ledger (profile, time, delta_seconds, reason, entry, note) VALUES ($1, $2, $3, $4, $5, $6)
                """, [.text(profile), .int(row.time.millisecondsSince1970), .int(row.deltaSeconds), .text(row.reason.rawValue),
                      .text(row.entry?.rawValue), .text(row.note)]))
        case .appendEvent(let e):
            receipt.eventIDs.append(try Self.insertEvent(e, s: s))
        case .updateEventPayload(let id, let payload):
            try requireChange(try s.execute("UPDATE events SET payload = $1 WHERE id = $2", [.text(payload), .int(id)]), "there is no event \(id)")
        case .saveGrant(let profile, let g, let ended):
            try saveGrant(profile: profile, g, ended: ended)
        case .saveAccount(let profile, let account):
            try saveAccount(profile: profile, account)
        case .addPlan(let profile, let when, let then, let created):
            receipt.planIDs.append(try insert("INSERT INTO plans (profile, when_text, then_text, created) VALUES ($1, $2, $3, $4)",
                                              [.text(profile), .text(when), .text(then), .int(created.millisecondsSince1970)]))
        case .archivePlan(let id):
            try requireChange(try s.execute("UPDATE plans SET archived = 1 WHERE id = $1", [.int(id)]), "there is no plan \(id)")
        case .countPlanShown(let id):
            try requireChange(try s.execute("UPDATE plans SET shown_count = shown_count + 1 WHERE id = $1", [.int(id)]), "there is no plan \(id)")
        case .addAlternative(let profile, let text, let created):
            receipt.alternativeIDs.append(try insert("INSERT INTO alternatives (profile, text, created) VALUES ($1, $2, $3)",
                                                     [.text(profile), .text(text), .int(created.millisecondsSince1970)]))
        case .removeAlternative(let id):
            try s.execute("DELETE FROM alternatives WHERE id = $1", [.int(id)])
        case .recordExercise(let profile, let r):
            try s.execute("INSERT INTO exercise_sessions (profile, time, exercise_id, entry, outcome) VALUES ($1, $2, $3, $4, $5)",
                          [.text(profile), .int(r.time.millisecondsSince1970), .text(r.exerciseID), .text(r.entry.rawValue), .text(r.outcome.rawValue)])
        case .addProtectedTime(let profile, let from, let to):
            try addProtectedTime(profile: profile, from: from, to: to)
        case .addTimeRequest(let profile, let seconds, let note, let created):
            receipt.timeRequestIDs.append(try insert("""
                INSERT INTO time_requests (profile, seconds, note, created, status) VALUES ($1, $2, $3, $4, 'pending')
                """, [.text(profile), .int(seconds), .text(note), .int(created.millisecondsSince1970)]))
        case .answerTimeRequest(let id, let status, let at, let by, let note):
            // Only a pending request can be answered: two owners on two nodes cannot both approve it.
            try requireChange(try s.execute("""
                UPDATE time_requests SET status = $1, answered_at = $2, answered_by = $3, answer_note = $4 WHERE id = $5 AND status = 'pending'
                """, [.text(status.rawValue), .int(at.millisecondsSince1970), .text(by), .text(note), .int(id)]), "time request \(id) is not pending")
        case .savePause(let profile, let p):
            try s.execute("""
                INSERT INTO pauses (profile, start, "end", reason, paused_by) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (profile) DO UPDATE SET start = excluded.start, "end" = excluded."end", reason = excluded.reason,
                paused_by = excluded.paused_by
                """, [.text(profile), .int(p.start.millisecondsSince1970), .int(p.end.millisecondsSince1970), .text(p.reason), .text(p.by)])
        case .removePause(let profile):
            try s.execute("DELETE FROM pauses WHERE profile = $1", [.text(profile)])
        case .saveAllowance(let profile, let a):
            // The entries' JSON is the key, as in the SQLite store (`removeAllowance` names them sorted).
            try s.execute("""
                INSERT INTO allowances (profile, entries, seconds, cooldown_until) VALUES ($1, $2, $3, $4)
                ON CONFLICT (profile, entries) DO UPDATE SET seconds = excluded.seconds, cooldown_until = excluded.cooldown_until
                """, [.text(profile), .text(SharedColumns.json(a.entries.map(\.rawValue))), .text(SharedColumns.json(a.secondsByWeekday)),
                      .int(a.cooldownUntil?.millisecondsSince1970)])
        case .removeAllowance(let profile, let entries):
            try s.execute("DELETE FROM allowances WHERE profile = $1 AND entries = $2",
                          [.text(profile), .text(SharedColumns.json(Array(Set(entries)).sorted().map(\.rawValue)))])
        case .saveSetting(let key, let value):
            try s.execute("INSERT INTO helper_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                          [.text(key), .text(value)])
        case .saveListSource(let l):
            try s.execute("""
                INSERT INTO household_lists (name, url, added_by_uid, added_by_gid, added, added_on) VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (name) DO UPDATE SET url = excluded.url, added_by_uid = excluded.added_by_uid,
                    added_by_gid = excluded.added_by_gid, added = excluded.added, added_on = excluded.added_on
                """, [.text(l.name), .text(l.url), .int(l.addedByUID.map { Int64($0) }), .int(l.addedByGID.map { Int64($0) }),
                      .int(l.added.millisecondsSince1970), .text(l.addedOn)])
        case .removeListSource(let name):
            guard try s.execute("DELETE FROM household_lists WHERE name = $1", [.text(name)]) > 0 else {
                throw StoreError.invalidChange("there is no list named \(name)")
            }
            try s.execute("DELETE FROM held_list_names WHERE name = $1", [.text(name)])
        case .saveHeldListNames(let held):
            let h = held.summary
            try s.execute("""
                INSERT INTO held_list_names (name, rules, name_count, revision, held_until, reason, held_since) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (name) DO UPDATE SET rules = excluded.rules, name_count = excluded.name_count, revision = excluded.revision,
                    held_until = excluded.held_until, reason = excluded.reason, held_since = excluded.held_since
                """, [.text(h.name), .text(held.rulesText), .count(held.rules.count), .int(h.revision), .int(h.until?.millisecondsSince1970),
                      .text(h.reason), .int(h.since.millisecondsSince1970)])
        }
    }

    private func saveGrant(profile: String, _ g: Grant, ended: StateChange.GrantEnd?) throws {
        try s.execute("""
            INSERT INTO grants (profile, id, entry, kind, start, "end", task, ended_at, end_reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (profile, id) DO UPDATE SET entry = excluded.entry, kind = excluded.kind, start = excluded.start,
            "end" = excluded."end", task = excluded.task, ended_at = excluded.ended_at, end_reason = excluded.end_reason
            """, [.text(profile), .int(g.id), .text(g.entry.rawValue), .text(g.kind.rawValue), .int(g.start.millisecondsSince1970),
                  .int(g.end.millisecondsSince1970), .text(g.task), .int(ended?.at.millisecondsSince1970), .text(ended?.reason)])
    }

    /// Replaces the profile's wallet and ladder rows with `account`, as the SQLite store does.
    private func saveAccount(profile: String, _ account: CreditAccountState) throws {
        let w = account.wallet
        let spend = w.spend
        try s.execute("""
            INSERT INTO wallet_state (profile, as_of, starter_granted, block_in_force, streak_start, frozen_until, spend_grant_id, spend_entry,
            spend_settled_through, spend_limit_end, uncharged_ms, next_grant_id, day, earned_today, spent_today, spent_today_by_entry,
            allowance_day, allowance_granted)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
            ON CONFLICT (profile) DO UPDATE SET as_of = excluded.as_of, starter_granted = excluded.starter_granted,
            block_in_force = excluded.block_in_force, streak_start = excluded.streak_start, frozen_until = excluded.frozen_until,
            spend_grant_id = excluded.spend_grant_id, spend_entry = excluded.spend_entry, spend_settled_through = excluded.spend_settled_through,
            spend_limit_end = excluded.spend_limit_end, uncharged_ms = excluded.uncharged_ms, next_grant_id = excluded.next_grant_id,
            day = excluded.day, earned_today = excluded.earned_today, spent_today = excluded.spent_today,
            spent_today_by_entry = excluded.spent_today_by_entry, allowance_day = excluded.allowance_day,
            allowance_granted = excluded.allowance_granted
            """, [.text(profile), .int(w.asOf.millisecondsSince1970), .bool(w.starterGranted), .bool(w.blockInForce),
                  .int(w.streakStart?.millisecondsSince1970), .int(w.frozenUntil?.millisecondsSince1970), .int(spend?.grantID),
                  .text(spend?.entry.rawValue), .int(spend?.settledThrough.millisecondsSince1970), .int(spend?.limitEnd?.millisecondsSince1970),
                  .int(w.unchargedMilliseconds), .int(w.nextGrantID), .text(w.day.map(SharedColumns.day)), .int(w.earnedToday), .int(w.spentToday),
                  .text(SharedColumns.json(Dictionary(uniqueKeysWithValues: w.spentTodayByEntry.map { ($0.key.rawValue, $0.value) }))),
                  .text(w.allowanceDay.map(SharedColumns.day)), .text(SharedColumns.json(w.allowanceGranted))])
        try s.execute("DELETE FROM wallet_batches WHERE profile = $1", [.text(profile)])
        for (position, b) in w.batches.enumerated() {
            let origin = SharedColumns.origin(b.origin)
            try s.execute("""
                INSERT INTO wallet_batches (profile, position, origin, earned_day, created_at, expires_at, remaining, earmark, allowance_key)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                """, [.text(profile), .count(position), .text(origin.origin), .text(origin.day), .int(b.createdAt.millisecondsSince1970),
                      .int(b.expiresAt?.millisecondsSince1970), .int(b.remaining), .text(b.earmark?.rawValue), .text(b.allowanceKey)])
        }
        let inUse = w.grantsInUse.map(\.id)
        try s.execute("""
            UPDATE grants SET ended_at = "end", end_reason = COALESCE(end_reason, 'elapsed')
            WHERE profile = $1 AND ended_at IS NULL AND NOT (id = ANY (SELECT jsonb_array_elements_text($2::jsonb)::bigint))
            """, [.text(profile), .text(SharedColumns.json(inUse))])
        for g in w.grantsInUse { try saveGrant(profile: profile, g, ended: nil) }

        let l = account.ladder
        if let day = l.day {
            try s.execute("""
                INSERT INTO peeks (profile, day, free_used, paid_used) VALUES ($1, $2, $3, $4)
                ON CONFLICT (profile, day) DO UPDATE SET free_used = excluded.free_used, paid_used = excluded.paid_used
                """, [.text(profile), .text(SharedColumns.day(day)), .count(l.freePeeksUsed), .count(l.paidPeeksUsed)])
        }
        if let month = l.month {
            try s.execute("""
                INSERT INTO token_months (profile, month, used) VALUES ($1, $2, $3) ON CONFLICT (profile, month) DO UPDATE SET used = excluded.used
                """, [.text(profile), .text(SharedColumns.month(month)), .count(l.tokensUsed)])
        }
        try s.execute("DELETE FROM bypass_lockouts WHERE profile = $1", [.text(profile)])
        for (entry, until) in l.lockedUntil {
            try s.execute("INSERT INTO bypass_lockouts (profile, entry, until) VALUES ($1, $2, $3)",
                          [.text(profile), .text(entry.rawValue), .int(until.millisecondsSince1970)])
        }
    }

    /// Adds `[from, to)` to the protected seconds of each local day it touches (SPEC §7).
    private mutating func addProtectedTime(profile: String, from: Instant, to: Instant) throws {
        guard to > from else { return }
        let calendar = try calendar(of: profile)
        var start = from
        while start < to {
            let end = min(to, calendar.nextMidnight(after: start))
            try s.execute("""
                INSERT INTO daily_rollups (profile, day, protected_seconds) VALUES ($1, $2, $3)
                ON CONFLICT (profile, day) DO UPDATE SET protected_seconds = daily_rollups.protected_seconds + excluded.protected_seconds
                """, [.text(profile), .text(SharedColumns.day(calendar.day(of: start))), .int((end - start).milliseconds / 1000)])
            start = end
        }
    }

    private mutating func calendar(of profile: String) throws -> LocalCalendar {
        if let c = calendars[profile] { return c }
        let c = try PostgresTally.calendar(of: profile, s: s)
        calendars[profile] = c
        return c
    }
}

/// One profile's days from the raw rows and the rollups, as `Store.dailyTotals` adds them up.
struct PostgresTally {
    let s: Statements
    let profile: String

    static func calendar(of profile: String, s: Statements) throws -> LocalCalendar {
        guard let zone = try s.rows("SELECT time_zone FROM profiles WHERE name = $1", [.text(profile)]).first?.text("time_zone") else {
            throw StoreError.invalidChange("there is no profile “\(profile)”; save it first")
        }
        guard let calendar = LocalCalendar(identifier: zone) else {
            throw StoreError.invalidRow(table: "profiles", detail: "time zone “\(zone)” of \(profile) is unknown")
        }
        return calendar
    }

    /// Every local day of the profile: recent days from the raw rows, rolled-up days from the rollups
    /// (as `Store.dailyTotals`).
    func dailyTotals() throws -> [DailyTotals] {
        let calendar = try Self.calendar(of: profile, s: s)
        var days = try byDay(before: nil, calendar: calendar)
        for r in try s.rows("SELECT * FROM daily_rollups WHERE profile = $1", [.text(profile)]) {
            let day = try SharedColumns.day(try r.text("day"), table: "daily_rollups")
            var t = DailyTotals(day: day)
            t.urges = Int(try r.int("urges"))
            t.resisted = Int(try r.int("resisted"))
            t.protectedSeconds = try r.int("protected_seconds")
            t.openSeconds = try r.int("open_seconds")
            t.spentSeconds = try r.int("spent_seconds")
            t.earnedSeconds = try r.int("earned_seconds")
            t.peeks = Int(try r.int("peeks"))
            t.tokens = Int(try r.int("tokens"))
            t.ledgerDeltaSeconds = try r.int("ledger_delta_seconds")
            SharedColumns.add(t, to: &days[day, default: DailyTotals(day: day)])
        }
        // The hours and entries of rolled-up days, read back as the SQLite store reads them.
        for r in try s.rows("SELECT day, hour, urges FROM daily_rollup_hours WHERE profile = $1", [.text(profile)]) {
            let day = try SharedColumns.day(try r.text("day"), table: "daily_rollup_hours")
            days[day, default: DailyTotals(day: day)].hourUrges[Int(try r.int("hour"))] += Int(try r.int("urges"))
        }
        for r in try s.rows("SELECT day, entry, urges, resisted FROM daily_rollup_entries WHERE profile = $1", [.text(profile)]) {
            let day = try SharedColumns.day(try r.text("day"), table: "daily_rollup_entries")
            let entry = try r.text("entry"), urges = Int(try r.int("urges")), resisted = Int(try r.int("resisted"))
            // Only non-zero counts become keys, as in the raw tally.
            if urges > 0 { days[day, default: DailyTotals(day: day)].entryUrges[entry, default: 0] += urges }
            if resisted > 0 { days[day, default: DailyTotals(day: day)].entryResisted[entry, default: 0] += resisted }
        }
        return days.values.sorted { $0.day < $1.day }
    }

    /// Raw ledger rows, urge events and ended grants by local day (the SQLite store's `RawTally`).
    /// - Parameter before: only rows strictly before this instant (retention); nil = all rows, and
    ///   the exercises too (never purged, so never rolled up).
    func byDay(before: Instant?, calendar: LocalCalendar) throws -> [LocalCalendar.Day: DailyTotals] {
        let limit = before?.millisecondsSince1970 ?? Int64.max
        var days: [LocalCalendar.Day: DailyTotals] = [:]
        func add(_ time: Int64, _ change: (inout DailyTotals) -> Void) {
            let day = calendar.day(of: Instant(millisecondsSince1970: time))
            change(&days[day, default: DailyTotals(day: day)])
        }
        for r in try s.rows("SELECT time, delta_seconds, reason FROM ledger WHERE profile = $1 AND time < $2", [.text(profile), .int(limit)]) {
            let delta = try r.int("delta_seconds")
            let reason = LedgerRow.Reason(rawValue: try r.text("reason"))
            add(try r.int("time")) { t in
                t.add(ledgerDelta: delta, reason: reason)
            }
        }
        for r in try s.rows("""
            SELECT u.time, u.entry, EXISTS (SELECT 1 FROM grants g WHERE g.profile = u.profile AND g.entry = u.entry
                                   AND g.start >= u.time AND g.start <= u.time + $1) AS opened
            FROM events u WHERE u.profile = $2 AND u.kind = $3 AND u.time < $4
            """, [.int(SharedColumns.resistWindow.milliseconds), .text(profile), .text(EventKind.urge.rawValue), .int(limit)]) {
            let opened = try r["opened"].decode(Bool.self)
            let time = try r.int("time")
            let entry = try r.textOrNil("entry") ?? "?"
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
        for r in try s.rows("SELECT start, ended_at FROM grants WHERE profile = $1 AND ended_at IS NOT NULL AND ended_at < $2",
                            [.text(profile), .int(limit)]) {
            let start = try r.int("start"), ended = try r.int("ended_at")
            add(start) { $0.openSeconds += max(0, ended - start) / 1000 }
        }
        if before == nil {
            for r in try s.rows("SELECT time FROM exercise_sessions WHERE profile = $1 AND outcome != 'skipped'", [.text(profile)]) {
                add(try r.int("time")) { $0.exercises += 1 }
            }
        }
        return days
    }
}
