import GRDB
import ScrollOffCore

extension Store {
    /// Applies `change` and saves `anchor` in ONE transaction, and returns only after COMMIT (with
    /// `synchronous = FULL`, after the WAL is on disk). So a credit change is durable before the
    /// helper acknowledges it, and a failure anywhere — a constraint, a full disk, a kill — leaves
    /// nothing of the change behind (SPEC §4, §11).
    ///
    /// - Parameter anchor: the trusted clock's reading at this commit (SPEC §11 "saved with every commit").
    /// - Throws: `StoreError`; `.diskFull` says nothing was lost, which is true: the transaction rolled back.
    @discardableResult
    public func commit(_ change: StateChange, anchor: ClockAnchor) throws(StoreError) -> CommitReceipt {
        try write { db in
            var writer = ChangeWriter(db: db)
            for op in change.operations { try writer.apply(op) }
            try db.execute(sql: """
                INSERT INTO clock_anchor (id, trusted, boot_ns, boot_id) VALUES (1, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET trusted = excluded.trusted, boot_ns = excluded.boot_ns, boot_id = excluded.boot_id
                """, arguments: [anchor.trusted.millisecondsSince1970, Int64(bitPattern: anchor.bootNanoseconds), anchor.bootID])
            return writer.receipt
        }
    }
}

/// Turns operations into SQL inside the commit's transaction.
struct ChangeWriter {
    let db: Database
    var receipt = CommitReceipt()
    /// Calendars of the profiles touched by this change, for splitting protected time into days.
    private var calendars: [String: LocalCalendar] = [:]

    init(db: Database) { self.db = db }

    mutating func apply(_ op: StateChange.Operation) throws {
        switch op {
        case .saveProfile(let p):
            try db.execute(sql: """
                INSERT INTO profiles (name, client_cidrs, time_zone, preset, knob_overrides, owner_uids, member_uids)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET client_cidrs = excluded.client_cidrs, time_zone = excluded.time_zone,
                preset = excluded.preset, knob_overrides = excluded.knob_overrides, owner_uids = excluded.owner_uids,
                member_uids = excluded.member_uids
                """, arguments: [p.name, JSONCoding.string(p.clientCIDRs), p.timeZoneID, p.preset.rawValue,
                                 JSONCoding.string(p.overrides), JSONCoding.string(p.ownerUIDs), JSONCoding.string(p.memberUIDs)])
            calendars[p.name] = nil
        case .removeProfile(let name):
            try db.execute(sql: "DELETE FROM profiles WHERE name = ?", arguments: [name])
        case .saveEntry(let profile, let e):
            try db.execute(sql: """
                INSERT INTO entries (profile, id, kind, added) VALUES (?, ?, ?, ?)
                ON CONFLICT (profile, id) DO UPDATE SET kind = excluded.kind
                """, arguments: [profile, e.id.rawValue, e.kind.rawValue, e.added.millisecondsSince1970])
        case .removeEntry(let profile, let id):
            try db.execute(sql: "DELETE FROM entries WHERE profile = ? AND id = ?", arguments: [profile, id.rawValue])
        case .saveBlock(let profile, let b):
            try db.execute(sql: """
                INSERT OR REPLACE INTO blocks (profile, entry, created, cooldown_until, reason) VALUES (?, ?, ?, ?, ?)
                """, arguments: [profile, b.entry.rawValue, b.created.millisecondsSince1970, b.cooldownUntil.millisecondsSince1970, b.reason])
        case .removeBlock(let profile, let entry):
            try db.execute(sql: "DELETE FROM blocks WHERE profile = ? AND entry = ?", arguments: [profile, entry.rawValue])
        case .saveSchedule(let profile, let s):
            let kind = Columns.scheduleKind(s.kind)
            try db.execute(sql: """
                INSERT OR REPLACE INTO schedules (profile, name, start_minute, end_minute, days, time_zone, kind, strict,
                entries, reason, enabled, cooldown_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [profile, s.name, s.start.minuteOfDay, s.end.minuteOfDay, Int(s.days.rawValue), s.timeZoneID,
                                 kind.kind, kind.strict, Columns.entries(s.entries), s.reason, s.enabled,
                                 s.cooldownUntil?.millisecondsSince1970])
        case .removeSchedule(let profile, let name):
            try db.execute(sql: "DELETE FROM schedules WHERE profile = ? AND name = ?", arguments: [profile, name])
        case .saveFocusSession(let profile, let f):
            try db.execute(sql: """
                INSERT OR REPLACE INTO focus_sessions (profile, id, entries, start, "end", reason) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [profile, f.id, Columns.entries(f.entries), f.start.millisecondsSince1970, f.end.millisecondsSince1970, f.reason])
        case .removeFocusSession(let profile, let id):
            try db.execute(sql: "DELETE FROM focus_sessions WHERE profile = ? AND id = ?", arguments: [profile, id])
        case .savePause(let profile, let p):
            try db.execute(sql: #"INSERT OR REPLACE INTO pauses (profile, start, "end", reason, paused_by) VALUES (?, ?, ?, ?, ?)"#,
                           arguments: [profile, p.start.millisecondsSince1970, p.end.millisecondsSince1970, p.reason, p.by])
        case .removePause(let profile):
            try db.execute(sql: "DELETE FROM pauses WHERE profile = ?", arguments: [profile])
        case .saveAllowance(let profile, let a):
            try db.execute(sql: "INSERT OR REPLACE INTO allowances (profile, entries, seconds, cooldown_until) VALUES (?, ?, ?, ?)",
                           arguments: [profile, JSONCoding.string(a.entries.map(\.rawValue)), JSONCoding.string(a.secondsByWeekday),
                                       a.cooldownUntil?.millisecondsSince1970])
        case .removeAllowance(let profile, let entries):
            try db.execute(sql: "DELETE FROM allowances WHERE profile = ? AND entries = ?",
                           arguments: [profile, JSONCoding.string(Array(Set(entries)).sorted().map(\.rawValue))])
        case .appendLedger(let profile, let row):
            try db.execute(sql: """
                INSERT INTO ledger (profile, time, delta_seconds, reason, entry, note) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [profile, row.time.millisecondsSince1970, row.deltaSeconds, row.reason.rawValue, row.entry?.rawValue, row.note])
            receipt.ledgerIDs.append(db.lastInsertedRowID)
        case .appendEvent(let e):
            try db.execute(sql: """
                INSERT INTO events (profile, time, kind, entry, client_ip, message, payload) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [e.profile, e.time.millisecondsSince1970, e.kind.rawValue, e.entry?.rawValue, e.clientIP, e.message, e.payload])
            receipt.eventIDs.append(db.lastInsertedRowID)
        case .updateEventPayload(let id, let payload):
            try db.execute(sql: "UPDATE events SET payload = ? WHERE id = ?", arguments: [payload, id])
            try requireChange("there is no event \(id)")
        case .saveGrant(let profile, let g, let ended):
            try saveGrant(profile: profile, g, ended: ended)
        case .saveAccount(let profile, let account):
            try saveAccount(profile: profile, account)
        case .addPlan(let profile, let when, let then, let created):
            try db.execute(sql: "INSERT INTO plans (profile, when_text, then_text, created) VALUES (?, ?, ?, ?)",
                           arguments: [profile, when, then, created.millisecondsSince1970])
            receipt.planIDs.append(db.lastInsertedRowID)
        case .archivePlan(let id):
            try db.execute(sql: "UPDATE plans SET archived = 1 WHERE id = ?", arguments: [id])
            try requireChange("there is no plan \(id)")
        case .countPlanShown(let id):
            try db.execute(sql: "UPDATE plans SET shown_count = shown_count + 1 WHERE id = ?", arguments: [id])
            try requireChange("there is no plan \(id)")
        case .addAlternative(let profile, let text, let created):
            try db.execute(sql: "INSERT INTO alternatives (profile, text, created) VALUES (?, ?, ?)",
                           arguments: [profile, text, created.millisecondsSince1970])
            receipt.alternativeIDs.append(db.lastInsertedRowID)
        case .removeAlternative(let id):
            try db.execute(sql: "DELETE FROM alternatives WHERE id = ?", arguments: [id])
        case .recordExercise(let profile, let r):
            try db.execute(sql: "INSERT INTO exercise_sessions (profile, time, exercise_id, entry, outcome) VALUES (?, ?, ?, ?, ?)",
                           arguments: [profile, r.time.millisecondsSince1970, r.exerciseID, r.entry.rawValue, r.outcome.rawValue])
        case .addProtectedTime(let profile, let from, let to):
            try addProtectedTime(profile: profile, from: from, to: to)
        case .addTimeRequest(let profile, let seconds, let note, let created):
            try db.execute(sql: "INSERT INTO time_requests (profile, seconds, note, created, status) VALUES (?, ?, ?, ?, 'pending')",
                           arguments: [profile, seconds, note, created.millisecondsSince1970])
            receipt.timeRequestIDs.append(db.lastInsertedRowID)
        case .answerTimeRequest(let id, let status, let at, let by, let note):
            // Only a pending request can be answered, so two owners answering at once cannot both
            // approve it (the second finds it answered and the whole commit rolls back).
            try db.execute(sql: """
                UPDATE time_requests SET status = ?, answered_at = ?, answered_by = ?, answer_note = ?
                WHERE id = ? AND status = 'pending'
                """, arguments: [status.rawValue, at.millisecondsSince1970, by, note, id])
            try requireChange("time request \(id) is not pending")
        case .saveSetting(let key, let value):
            try db.execute(sql: "INSERT INTO helper_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                           arguments: [key, value])
        case .saveListSource(let l):
            try db.execute(sql: """
                INSERT INTO household_lists (name, url, added_by_uid, added_by_gid, added, added_on) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET url = excluded.url, added_by_uid = excluded.added_by_uid,
                    added_by_gid = excluded.added_by_gid, added = excluded.added, added_on = excluded.added_on
                """, arguments: [l.name, l.url, l.addedByUID.map { Int64($0) }, l.addedByGID.map { Int64($0) }, l.added.millisecondsSince1970, l.addedOn])
        case .removeListSource(let name):
            try db.execute(sql: "DELETE FROM household_lists WHERE name = ?", arguments: [name])
            try requireChange("there is no list named \(name)")
            try db.execute(sql: "DELETE FROM held_list_names WHERE name = ?", arguments: [name])
        case .saveHeldListNames(let held):
            let s = held.summary
            try db.execute(sql: """
                INSERT INTO held_list_names (name, rules, name_count, revision, held_until, reason, held_since) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET rules = excluded.rules, name_count = excluded.name_count, revision = excluded.revision,
                    held_until = excluded.held_until, reason = excluded.reason, held_since = excluded.held_since
                """, arguments: [s.name, held.rulesText, held.rules.count, s.revision, s.until?.millisecondsSince1970, s.reason,
                                 s.since.millisecondsSince1970])
        }
    }

    private func requireChange(_ message: String) throws {
        if db.changesCount == 0 { throw StoreError.invalidChange(message) }
    }

    /// Adds `[from, to)` to the protected seconds of each local day it touches (SPEC §7).
    private mutating func addProtectedTime(profile: String, from: Instant, to: Instant) throws {
        guard to > from else { return }
        let calendar = try calendar(of: profile)
        var start = from
        while start < to {
            let end = min(to, calendar.nextMidnight(after: start))
            let day = calendar.day(of: start)
            let seconds = (end - start).milliseconds / 1000
            try db.execute(sql: """
                INSERT INTO daily_rollups (profile, day, protected_seconds) VALUES (?, ?, ?)
                ON CONFLICT (profile, day) DO UPDATE SET protected_seconds = protected_seconds + excluded.protected_seconds
                """, arguments: [profile, Columns.day(day), seconds])
            start = end
        }
    }

    private mutating func calendar(of profile: String) throws -> LocalCalendar {
        if let c = calendars[profile] { return c }
        let c = try ProfileCalendars.calendar(of: profile, in: db)
        calendars[profile] = c
        return c
    }
}

/// The local calendar of a stored profile.
enum ProfileCalendars {
    static func calendar(of profile: String, in db: Database) throws -> LocalCalendar {
        guard let zone = try String.fetchOne(db, sql: "SELECT time_zone FROM profiles WHERE name = ?", arguments: [profile]) else {
            throw StoreError.invalidChange("there is no profile “\(profile)”; save it first")
        }
        guard let calendar = LocalCalendar(identifier: zone) else {
            throw StoreError.invalidRow(table: "profiles", detail: "time zone “\(zone)” of \(profile) is unknown")
        }
        return calendar
    }
}
