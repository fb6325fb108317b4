import Foundation
import ScrollOffCore
import Store

/// A plan shown at a bypass and not yet followed by its grant (SPEC §8): the grant that
/// follows within `PlanBook.flowWindow` for the same entry is the same flow and is not counted
/// again, and neither is the same preview asked again (a page refresh).
struct PlanFlow {
    var planID: Int64
    var entry: EntryID?
    var at: Instant
    var granted: Bool
}

/// Every profile's if-then plans and alternatives (SPEC §8), and per profile the bypass
/// flow that showed a plan last. The engine owns one; it commits a change (a plan added, archived
/// or counted as shown) before it makes it here.
struct PlanBook {
    /// How long a bypass flow (plan shown → grant) may take and still count the plan once.
    static let flowWindow = Span.minutes(10)

    private(set) var plans: [Plan]
    private(set) var alternatives: [Alternative]
    /// Per profile, the plan shown by the last bypass preview or grant.
    private var flows: [String: PlanFlow] = [:]

    init(plans: [Plan], alternatives: [Alternative]) {
        self.plans = plans
        self.alternatives = alternatives
    }

    func plan(id: Int64) -> Plan? { plans.first { $0.id == id } }

    /// `profile`'s plans, most recent first; archived ones with `includeArchived`.
    func plans(profile: String, includeArchived: Bool) -> [Plan] {
        plans.filter { $0.profile == profile && (includeArchived || !$0.archived) }.sorted { $0.id > $1.id }
    }

    /// `profile`'s alternatives, newest first.
    func alternatives(profile: String) -> [Alternative] {
        alternatives.filter { $0.profile == profile }.sorted { $0.id > $1.id }
    }

    /// The active plan whose trigger fits the moment best (`PlanTrigger`: entry, time of day,
    /// weekday in `timeZone`), ties to the most recently made; nil when the profile has none
    /// that fits. `entryNames`: the names people write for the entry bypassed (nil: none named).
    func forMoment(profile: String, entryNames: [String]?, at now: Instant, timeZone: TimeZone,
                   knownEntryNames: () -> [String]) -> Plan? {
        let candidates = plans.filter { $0.profile == profile && !$0.archived }.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
        guard !candidates.isEmpty else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute, .weekday], from: now.date)
        let moment = PlanTrigger.Moment(minuteOfDay: (parts.hour ?? 0) * 60 + (parts.minute ?? 0), weekday: parts.weekday ?? 1,
                                        entryNames: entryNames)
        let best = PlanTrigger.best(candidates.enumerated().map { ($0.element.when, $0.offset) }, at: moment, knownEntryNames: knownEntryNames())
        return best.map { candidates[$0] }
    }

    /// The plan of `profile`'s bypass flow for `entry` still under way at `now` (shown by a
    /// preview, not yet granted, within `flowWindow`): it is shown again, not counted again.
    func planInFlow(profile: String, entry: EntryID?, at now: Instant) -> Plan? {
        guard let f = flows[profile], !f.granted, f.entry == entry, now - f.at < Self.flowWindow, f.at <= now else { return nil }
        return plans.first { $0.id == f.planID && !$0.archived }
    }

    /// A preview showed `plan`: a flow starts, and the plan was counted as shown.
    mutating func previewed(_ plan: Plan, profile: String, entry: EntryID?, at now: Instant) {
        countShown(plan.id)
        flows[profile] = PlanFlow(planID: plan.id, entry: entry, at: now, granted: false)
    }

    /// After a grant: the flow is over, so the next preview counts again.
    mutating func granted(_ plan: Plan?, profile: String, entry: EntryID, at now: Instant) {
        flows[profile] = plan.map { PlanFlow(planID: $0.id, entry: entry, at: now, granted: true) }
    }

    mutating func countShown(_ id: Int64) {
        if let k = plans.firstIndex(where: { $0.id == id }) { plans[k].shownCount += 1 }
    }

    mutating func add(_ plan: Plan) { plans.append(plan) }
    mutating func add(_ alternative: Alternative) { alternatives.append(alternative) }

    /// Plan `id` of `profile`, when there is one to archive.
    func archivable(_ id: Int64, profile: String) throws(EngineError) {
        guard plans.contains(where: { $0.id == id && $0.profile == profile }) else {
            throw .notFound("There is no plan \(id); `scrolloff plan list` shows their ids.")
        }
    }

    mutating func archive(_ id: Int64) {
        if let k = plans.firstIndex(where: { $0.id == id }) { plans[k].archived = true }
    }

    mutating func remove(profile: String) {
        plans.removeAll { $0.profile == profile }
        alternatives.removeAll { $0.profile == profile }
    }
}
