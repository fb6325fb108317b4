import ControlAPI
import DomainLists
import Engine
import ScrollOffCore
import Store

// The rules and reports features' answers on the wire, made from the engine's domain values here at
// the edge (the pattern of WireAnswers.swift). `package`: the household page makes the same wire
// values from the same engine calls, so both spell a schedule or an entry the same way.

extension EntryReport {
    /// One entry of `block`, `unblock` and `status` (SPEC §13 `entries[]`).
    package init(_ r: EntryReading) {
        var openUntil: Instant?
        if case .open(let until) = r.status.state { openUntil = until }
        self.init(id: r.id.rawValue, state: r.status.state.name, lockedUntil: r.lockedUntil, reason: r.status.reason,
                  nextChange: r.status.nextChange, openUntil: openUntil, nextState: r.status.nextState?.name, reasons: r.status.reasons)
    }
}

extension BlockResult {
    package init(_ outcome: BlockOutcome) {
        self.init(entries: outcome.entries.map(EntryReport.init), message: outcome.message, now: outcome.now)
    }
}

extension ScheduleReport {
    /// A schedule with its lock, `kind` as `block`, `curfew` or `strict-curfew`.
    package init(_ r: ScheduleReading) {
        let s = r.schedule
        let kind = switch s.kind {
        case .block: "block"
        case .curfew: "curfew"
        case .strictCurfew: "strict-curfew"
        }
        self.init(name: s.name, from: s.start.description, to: s.end.description, days: Int(s.days.rawValue),
                  daysText: s.days.description, timeZone: s.timeZoneID, kind: kind, entries: s.entries.sorted().map(\.rawValue),
                  reason: s.reason, enabled: s.enabled, lockedUntil: r.lockedUntil, now: r.now)
    }
}

extension FocusReport {
    package init(_ session: FocusSession) {
        self.init(id: session.id, entries: session.entries.sorted().map(\.rawValue), start: session.start, end: session.end,
                  reason: session.reason)
    }
}

extension ServiceReport {
    package init(_ r: ServiceReading) {
        self.init(id: r.service.id, name: r.service.name, category: r.service.category.rawValue, note: r.service.note,
                  state: EntryStateName(r.state))
    }
}

extension ExportRowReport {
    /// One row of `export --json`: the store's row, typed, the same rows as the CSV (SPEC §12).
    package init(_ r: ExportRow) {
        self.init(record: r.record.rawValue, id: r.id, time: r.timeUTC, timeMs: r.time.millisecondsSince1970, profile: r.profile,
                  reason: r.record == .ledger ? r.what : nil, kind: r.record == .event ? r.what : nil,
                  deltaSeconds: r.deltaSeconds, entry: r.entry, clientIP: r.clientIP, text: r.text,
                  payload: r.payload.flatMap(JSONValue.init(text:)))
    }
}
