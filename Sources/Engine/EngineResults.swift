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

extension PlanReport {
    init(_ p: Plan) {
        self.init(id: p.id, when: p.when, then: p.then, archived: p.archived, shownCount: p.shownCount, created: p.created)
    }
}
