import ControlAPI
import ScrollOffCore
import Store

// The answers of engine commands are the control API's wire types (Sources/ControlAPI:
// StatusTypes, CreditTypes, RuleTypes, InsightTypes), so the CLI decodes exactly what the engine
// builds. Here: building them from the engine's own values.

extension GrantReport {
    init(_ g: Grant) {
        self.init(id: g.id, entry: g.entry.rawValue, kind: g.kind.rawValue, start: g.start, end: g.end, task: g.task)
    }
}

extension ScheduleReport {
    /// `lockedUntil` is the later of the curfew edit lock (SPEC §2) and the cooldown (SPEC §3).
    init(_ s: Schedule, at t: Instant) {
        let kind = switch s.kind {
        case .block: "block"
        case .curfew: "curfew"
        case .strictCurfew: "strict-curfew"
        }
        let lock = ChangeRules.curfewEditLock(of: s, at: t)
        let cooldown = s.cooldownUntil.flatMap { $0 > t ? $0 : nil }
        self.init(name: s.name, from: s.start.description, to: s.end.description, days: Int(s.days.rawValue),
                  daysText: s.days.description, timeZone: s.timeZoneID, kind: kind, entries: s.entries.sorted().map(\.rawValue),
                  reason: s.reason, enabled: s.enabled, lockedUntil: [lock, cooldown].compactMap { $0 }.max(), now: t)
    }
}

extension PlanReport {
    init(_ p: Plan) {
        self.init(id: p.id, when: p.when, then: p.then, archived: p.archived, shownCount: p.shownCount, created: p.created)
    }
}
