import ControlAPI
import Foundation
import ScrollOffCore
import Store

/// Who is making the change the current request makes (SPEC §12), set once per request by the
/// control router (the caller's uid) and the household page (the signed-in owner, or the device),
/// and read by the engine when it records a rule change or a refusal. A task-local, so no engine
/// method needs a parameter for it; a change with none set was the helper's own.
public enum ChangeActor {
    @TaskLocal public static var current: String?

    /// "alice (uid 1000)", "root (uid 0)", or "uid 1234" for a uid without a name.
    public static func describe(_ caller: CallerIdentity) -> String {
        let name = GroupMembershipAuthorizer.name(of: caller)
        return name.hasPrefix("uid ") ? name : "\(name) (uid \(caller.uid))"
    }

    /// What a change made by the helper itself says (a configuration file change has its own).
    public static let helper = "the helper"
    public static let configurationFile = "the configuration file"
}

/// The refusals recorded as events, coalesced so a flood of attempts cannot grow the events
/// table without bound (SPEC §12).
///
/// The bound: per profile, at most `rowsPerHour` refusal rows have their first attempt inside any
/// rolling hour. An attempt by the same actor with the same profile, kind, action, rule and subject as a row begun
/// less than `burstWindow` ago is counted in that row (`count`, `lastAt`); an attempt that would
/// need a new row when the hour's rows are used up is counted in the newest row (`folded`). So a
/// script refused 10,000 times in an hour writes at most 20 rows (the count stays exact), at most
/// 480 a day and, with the 90-day retention (SPEC §12), at most 43,200 per profile ever. The
/// window lives in memory: a restart starts new rows, which the restart itself rate-limits.
struct RefusalLog {
    static let burstWindow = Span.minutes(10)
    static let rowsPerHour = 20

    struct Key: Hashable {
        var actor: String
        var kind: EventKind
        var action: String
        var rule: Refusal.Rule
        var subject: String?
    }

    struct Row {
        var id: Int64
        var key: Key
        var first: Instant
        var record: RefusalRecord
    }

    enum Decision: Equatable {
        case insert
        /// Count in row `index` of the profile's recent rows; `folded` when only the hour's cap put it there.
        case count(index: Int, folded: Bool)
    }

    /// Rows begun within the last hour, per profile, oldest first.
    private(set) var recent: [String: [Row]] = [:]

    mutating func decide(_ key: Key, profile: String, at now: Instant) -> Decision {
        var rows = recent[profile] ?? []
        rows.removeAll { now - $0.first >= .hours(1) || $0.first > now }
        recent[profile] = rows
        if let i = rows.lastIndex(where: { $0.key == key && now - $0.first < Self.burstWindow }) { return .count(index: i, folded: false) }
        if rows.count >= Self.rowsPerHour { return .count(index: rows.count - 1, folded: true) }
        return .insert
    }

    mutating func inserted(_ row: Row, profile: String) { recent[profile, default: []].append(row) }

    mutating func update(_ record: RefusalRecord, index: Int, profile: String) { recent[profile]?[index].record = record }

    mutating func forget(profile: String) { recent[profile] = nil }
}

/// A plan shown at a bypass and not yet followed by its grant (SPEC §8): the grant that follows
/// within `HelperEngine.planFlowWindow` for the same entry is the same flow and is not counted
/// again, and neither is the same preview asked again (a page refresh).
struct PlanFlow {
    var planID: Int64
    var entry: EntryID?
    var at: Instant
    var granted: Bool
}

extension HelperEngine {
    /// How long a bypass flow (plan shown → grant) may take and still count the plan once.
    static let planFlowWindow = Span.minutes(10)

    /// Refusals of a bypass that are the rules holding (a curfew, a lockout, peeks or tokens used
    /// up, no credit, a cap); "not blocked" and "already open" are not, and are not recorded.
    static let heldBypassRules: Set<Refusal.Rule> = [.curfew, .bypassLockout, .peeksUsedUp, .tokensUsedUp, .insufficientCredit,
                                                       .entryDailySpendCap, .cooldown, .curfewEditLock]
    /// Refusals of a loosening that are a lock holding (SPEC §2, §3).
    static let heldEditRules: Set<Refusal.Rule> = [.cooldown, .curfewEditLock]

    /// Who makes the change in progress.
    var currentActor: String { actorOverride ?? ChangeActor.current ?? ChangeActor.helper }

    // MARK: Refusals

    /// Records a refused bypass (`peek`, `use`, `token`) as a `bypassRefused` event, or a refused
    /// loosening as `editRefused`, with the refusal exactly as the person got it, coalesced by
    /// `RefusalLog`. Recording never changes the answer: a write that fails is logged, and the
    /// refusal is what the caller throws either way.
    func recordRefused(_ error: EngineError, profile: String, action: String, kind: EventKind) {
        guard let refusal = error.refusal, profiles.contains(where: { $0.name == profile }) else { return }
        let rules = kind == .bypassRefused ? Self.heldBypassRules : Self.heldEditRules
        guard rules.contains(refusal.rule) else { return }
        let now = advanceClock()
        let curfew = refusal.rule == .curfew ? curfewName(profile: profile, entry: refusal.subject, at: now) : nil
        let key = RefusalLog.Key(actor: currentActor, kind: kind, action: action, rule: refusal.rule, subject: refusal.subject)
        do throws(EngineError) {
            switch refusalLog.decide(key, profile: profile, at: now) {
            case .insert:
                let record = RefusalRecord(refusal, action: action, actor: currentActor, curfew: curfew, at: now)
                let receipt = try commitReturning(StateChange([.appendEvent(StoredEvent(record, kind: kind, profile: profile, at: now))]), now: now)
                if let id = receipt.eventIDs.last {
                    refusalLog.inserted(RefusalLog.Row(id: id, key: key, first: now, record: record), profile: profile)
                }
            case .count(let index, let folded):
                guard let row = refusalLog.recent[profile]?[index] else { return }
                var record = row.record
                if folded { record.folded += 1 } else { record.count += 1 }
                record.lastAt = now
                _ = try commitReturning(StateChange([.updateEventPayload(id: row.id, payload: record.payloadText)]), now: now)
                refusalLog.update(record, index: index, profile: profile)
            }
        } catch {
            logger.warning("a refusal could not be recorded; the refusal itself stands", metadata: ["error": "\(error)"])
        }
    }

    /// The curfew that holds `entry` now: the enabled curfew covering it whose occurrence now
    /// lasts longest (the one `curfewEnd` takes the end from).
    func curfewName(profile: String, entry: String?, at now: Instant) -> String? {
        guard let p = profiles.first(where: { $0.name == profile }) else { return nil }
        var best: (name: String, end: Instant)?
        for s in p.schedules where s.enabled && s.kind.isCurfew && (entry.map { s.covers(EntryID($0)) } ?? s.kind.isStrict) {
            if let o = s.occurrence(containing: now), best.map({ o.end > $0.end }) ?? true { best = (s.name, o.end) }
        }
        return best?.name
    }

    // MARK: Rule changes

    /// The `ruleChange` events for what a command changed, from the rules before (`old`) and after
    /// (`new`): one diff of the state the command produced, so every path that changes a rule
    /// (the CLI, the household page, the configuration file, the timer applying held-back
    /// changes) is recorded the same way and none needs its own copy.
    static func ruleChanges(from old: [ProfileRuntime], to new: [ProfileRuntime], at now: Instant, actor: String) -> [StoredEvent] {
        var out: [StoredEvent] = []
        func add(_ change: RuleChangeRecord.Change, _ profile: String?, rule: String, before: String? = nil, entries: [EntryID] = [],
                 message: String) {
            let record = RuleChangeRecord(change: change, actor: actor, rule: rule, before: before, entries: entries.map(\.rawValue).sorted())
            out.append(StoredEvent(record, profile: profile, entry: entries.count == 1 ? entries[0] : nil, at: now, message: "\(message) — by \(actor)."))
        }
        let oldByName = Dictionary(old.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let newNames = Set(new.map(\.name))
        for p in new {
            // Which profile a device follows is machine-wide (root's, SPEC §9), and it outlives
            // the profile: a profile's own events go with it when it is removed.
            guard let o = oldByName[p.name] else {
                add(.profileAdded, nil, rule: profileWords(p.settings), message: "Added profile \(p.name): \(profileWords(p.settings))")
                continue
            }
            settingsChanges(o.settings, p.settings, add: { c, rule, before, message in
                add(c, c == .profileClients ? nil : p.name, rule: rule, before: before, message: message)
            })
            // Blocks.
            let oldBlocks = Dictionary(o.blocks.map { ($0.entry, $0) }, uniquingKeysWith: { a, _ in a })
            for b in p.blocks {
                let rule = blockWords(b, now: now)
                if let ob = oldBlocks[b.entry] {
                    if ob != b { add(.blockRenewed, p.name, rule: rule, before: blockWords(ob, now: now), entries: [b.entry], message: "Renewed the block on \(b.entry): \(rule)") }
                } else {
                    add(.block, p.name, rule: rule, entries: [b.entry], message: "Blocked \(b.entry): \(rule)")
                }
            }
            for ob in o.blocks where !p.blocks.contains(where: { $0.entry == ob.entry }) {
                add(.unblock, p.name, rule: blockWords(ob, now: now), entries: [ob.entry], message: "Unblocked \(ob.entry); schedules that name it still apply")
            }
            // Schedules, curfews included.
            let oldSchedules = Dictionary(o.schedules.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            for s in p.schedules {
                let rule = scheduleWords(s)
                if let os = oldSchedules[s.name] {
                    if !sameRule(os, s) {
                        add(.scheduleEdited, p.name, rule: rule, before: scheduleWords(os), entries: Array(s.entries.union(os.entries)),
                            message: "Changed \(rule) (was \(scheduleWords(os)))")
                    }
                } else {
                    add(.scheduleAdded, p.name, rule: rule, entries: Array(s.entries), message: "Added \(rule)")
                }
            }
            for os in o.schedules where !p.schedules.contains(where: { $0.name == os.name }) {
                add(.scheduleRemoved, p.name, rule: scheduleWords(os), entries: Array(os.entries), message: "Removed \(scheduleWords(os))")
            }
            // Focus sessions (they cannot be ended early; each ends by itself at its end).
            let oldFocus = Set(o.focusSessions.map(\.id))
            for f in p.focusSessions where !oldFocus.contains(f.id) {
                let rule = focusWords(f)
                add(.focusStarted, p.name, rule: rule, entries: Array(f.entries), message: "Started a \(rule)")
            }
        }
        for o in old where !newNames.contains(o.name) {
            add(.profileRemoved, nil, rule: profileWords(o.settings), message: "Removed profile \(o.name) (\(profileWords(o.settings)))")
        }
        return out
    }

    /// `focusEnded` events for the sessions of `p` that ended in `(after, through]`, each at its
    /// own end. A focus session cannot be ended early (SPEC §2), so its end is the helper's: the
    /// timer calls this with the curfew-reminder cursor, which starts at the helper's start, so a
    /// session that ended while the helper was stopped is not recorded late.
    static func focusEnds(of p: ProfileRuntime, after: Instant, through now: Instant) -> [StoredEvent] {
        p.focusSessions.filter { $0.end > after && $0.end <= now }.sorted { $0.end < $1.end }.map { f in
            let rule = focusWords(f)
            let record = RuleChangeRecord(change: .focusEnded, actor: ChangeActor.helper, rule: rule, entries: f.entries.map(\.rawValue).sorted())
            return StoredEvent(record, profile: p.name, entry: f.entries.count == 1 ? f.entries.first : nil, at: f.end,
                               message: "Your \(rule) ended as planned.")
        }
    }

    /// A schedule's rule apart from its bookkeeping (a cooldown start is not a change of rule).
    private static func sameRule(_ a: Schedule, _ b: Schedule) -> Bool {
        a.start == b.start && a.end == b.end && a.days == b.days && a.entries == b.entries && a.kind == b.kind && a.reason == b.reason
            && a.enabled == b.enabled && a.timeZoneID == b.timeZoneID
    }

    private static func settingsChanges(_ o: ProfileSettings, _ n: ProfileSettings,
                                        add: (RuleChangeRecord.Change, String, String?, String) -> Void) {
        if o.clientCIDRs != n.clientCIDRs {
            add(.profileClients, "clients \(list(n.clientCIDRs))", "clients \(list(o.clientCIDRs))",
                "Profile \(n.name) now covers \(list(n.clientCIDRs)) (was \(list(o.clientCIDRs)))")
        }
        if o.ownerUIDs != n.ownerUIDs || o.memberUIDs != n.memberUIDs {
            let words = { (s: ProfileSettings) in "owners \(list(s.ownerUIDs.map(String.init))), members \(list(s.memberUIDs.map(String.init)))" }
            add(.profileHousehold, words(n), words(o), "Profile \(n.name) has \(words(n)) (was \(words(o)))")
        }
        if o.timeZoneID != n.timeZoneID {
            add(.timeZone, "time zone \(n.timeZoneID)", "time zone \(o.timeZoneID)", "Profile \(n.name) keeps time in \(n.timeZoneID) (was \(o.timeZoneID))")
        }
        if o.preset != n.preset {
            add(.preset, "preset \(n.preset.rawValue)", "preset \(o.preset.rawValue)", "Profile \(n.name) follows the \(n.preset.rawValue) preset (was \(o.preset.rawValue))")
        }
        if o.overrides != n.overrides {
            let (now, was) = knobDifference(o.overrides, n.overrides)
            add(.knobs, now, was, "Profile \(n.name) knobs: \(now) (was \(was))")
        }
    }

    /// The knob overrides that differ, as `name value` words, now and before.
    private static func knobDifference(_ o: KnobOverrides, _ n: KnobOverrides) -> (now: String, was: String) {
        func fields(_ k: KnobOverrides) -> [String: String] {
            var out: [String: String] = [:]
            for child in Mirror(reflecting: k).children {
                guard let label = child.label else { continue }
                let text = "\(child.value)"
                out[label] = text == "nil" ? "preset" : text.replacingOccurrences(of: "Optional(", with: "").replacingOccurrences(of: ")", with: "")
            }
            return out
        }
        let a = fields(o), b = fields(n)
        let changed = Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
        return (changed.map { "\($0) \(b[$0] ?? "preset")" }.joined(separator: ", "), changed.map { "\($0) \(a[$0] ?? "preset")" }.joined(separator: ", "))
    }

    private static func list(_ items: [String]) -> String { items.isEmpty ? "none" : items.joined(separator: ", ") }

    static func profileWords(_ s: ProfileSettings) -> String {
        "clients \(list(s.clientCIDRs)), preset \(s.preset.rawValue), zone \(s.timeZoneID)"
    }

    static func blockWords(_ b: Block, now: Instant) -> String {
        let held = b.cooldownUntil > now ? ", held for at least \(SpanWords.describe(b.cooldownUntil - now))" : ""
        return "around-the-clock block on \(b.entry)\(held)" + (b.reason.map { " (reason “\($0)”)" } ?? "")
    }

    static func scheduleWords(_ s: Schedule) -> String {
        let kind = switch s.kind {
        case .block: "block schedule"
        case .curfew: "curfew"
        case .strictCurfew: "strict curfew"
        }
        let what = s.kind.isStrict ? "everything but the allow lists" : s.entries.map(\.rawValue).sorted().joined(separator: ", ")
        return "\(kind) “\(s.name)” \(s.start)–\(s.end) \(s.days) for \(what)" + (s.reason.map { " (reason “\($0)”)" } ?? "")
            + (s.enabled ? "" : ", switched off")
    }

    static func focusWords(_ f: FocusSession) -> String {
        "focus session of \(SpanWords.describe(f.end - f.start)) on \(f.entries.map(\.rawValue).sorted().joined(separator: ", "))"
            + (f.reason.map { " (reason “\($0)”)" } ?? "")
    }

    /// A list added or removed (`scrolloff lists add|rm`): machine-wide, since every profile can
    /// block a list by its name.
    public func recordListChange(added: Bool, name: String, url: String) {
        let now = advanceClock()
        let rule = "list \(name) from \(url)"
        let record = RuleChangeRecord(change: added ? .listAdded : .listRemoved, actor: currentActor, rule: rule, entries: [name])
        let event = StoredEvent(record, profile: nil, entry: EntryID(name), at: now,
                                message: "\(added ? "Added" : "Removed") \(rule) — by \(currentActor).")
        do { _ = try commitReturning(StateChange([.appendEvent(event)]), now: now) } catch {
            logger.warning("a list change could not be recorded as an event", metadata: ["list.name": "\(name)", "error": "\(error)"])
        }
    }

    // MARK: Plans (SPEC §8)

    /// The plan to show at a bypass of `entry` now: the active plan whose trigger fits the moment
    /// best (`PlanTrigger`: entry, time of day, weekday in the profile's zone), ties to the most
    /// recently made; nil when the profile has none that fits.
    func planForMoment(profile: String, entry: EntryID?, at now: Instant) -> Plan? {
        guard let p = profiles.first(where: { $0.name == profile }) else { return nil }
        let candidates = plans.filter { $0.profile == profile && !$0.archived }.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
        guard !candidates.isEmpty else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = p.calendar.timeZone
        let parts = calendar.dateComponents([.hour, .minute, .weekday], from: now.date)
        let moment = PlanTrigger.Moment(minuteOfDay: (parts.hour ?? 0) * 60 + (parts.minute ?? 0), weekday: parts.weekday ?? 1,
                                        entryNames: entry.map { names(of: $0) })
        var known = catalog.services.flatMap { [$0.id, $0.name] }
        known += p.namedEntries(at: now).map(\.rawValue) + listNames.sorted()
        let best = PlanTrigger.best(candidates.enumerated().map { ($0.element.when, $0.offset) }, at: moment, knownEntryNames: known)
        return best.map { candidates[$0] }
    }

    /// An entry's names people write: its id, and a service's display name.
    private func names(of entry: EntryID) -> [String] {
        var out = [entry.rawValue]
        if let s = catalog.service(id: entry.rawValue) { out.append(s.name) }
        return out
    }

    /// The plan the bypass preview shows (SPEC §8): chosen for the moment and counted as shown
    /// once per bypass flow — asking again for the same entry before the grant (a page refresh,
    /// a second look) does not count it again.
    func planShownAtPreview(profile: String, entry: EntryID?, at now: Instant) -> Plan? {
        if let f = planFlows[profile], !f.granted, f.entry == entry, now - f.at < Self.planFlowWindow, f.at <= now,
           let plan = plans.first(where: { $0.id == f.planID && !$0.archived }) {
            return plan
        }
        guard let plan = planForMoment(profile: profile, entry: entry, at: now) else { return nil }
        do {
            _ = try commitReturning(StateChange([.countPlanShown(id: plan.id)]), now: now)
            if let k = plans.firstIndex(where: { $0.id == plan.id }) { plans[k].shownCount += 1 }
            planFlows[profile] = PlanFlow(planID: plan.id, entry: entry, at: now, granted: false)
        } catch {
            logger.warning("a plan shown could not be counted", metadata: ["error": "\(error)"])
        }
        return plans.first { $0.id == plan.id } ?? plan
    }

    /// The plan a grant for `entry` shows, and whether the grant must count it: not when the
    /// preview of the same flow already did.
    func planAtGrant(profile: String, entry: EntryID, at now: Instant) -> (plan: Plan?, count: Bool) {
        if let f = planFlows[profile], !f.granted, f.entry == entry, now - f.at < Self.planFlowWindow, f.at <= now,
           let plan = plans.first(where: { $0.id == f.planID && !$0.archived }) {
            return (plan, false)
        }
        return (planForMoment(profile: profile, entry: entry, at: now), true)
    }

    /// After a grant: the flow is over, so the next preview counts again.
    func finishPlanFlow(profile: String, plan: Plan?, entry: EntryID, at now: Instant) {
        guard let plan else {
            planFlows[profile] = nil
            return
        }
        planFlows[profile] = PlanFlow(planID: plan.id, entry: entry, at: now, granted: true)
    }
}

// MARK: Reading the log

extension HelperEngine {
    /// One `events` row for the wire, with a rule change's or a refusal's details typed.
    static func eventReport(_ e: StoredEvent) -> EventReport {
        let change = e.ruleChange.map { RuleChangeInfo(change: $0.change, actor: $0.actor, rule: $0.rule, before: $0.before, entries: $0.entries) }
        let refusal = e.refusalRecord.map { r in
            RefusalInfo(rule: r.rule.wireName, subject: r.subject, opensAt: r.opensAt, reason: r.reason, message: r.message,
                        action: r.action, actor: r.actor, curfew: r.curfew, count: r.count, lastAt: r.lastAt, folded: r.folded)
        }
        return EventReport(id: e.id, profile: e.profile, time: e.time, kind: e.kind.rawValue, entry: e.entry?.rawValue, message: e.message,
                           ruleChange: change, refusal: refusal)
    }

    /// `scrolloff export --json` (SPEC §12): every ledger row and event still kept, typed, the
    /// same rows as the CSV.
    public func exportRows(profiles: Set<String>? = nil) throws(EngineError) -> [ExportRowReport] {
        try flushUrges()
        let rows: [ExportRow]
        do { rows = try store.exportRows(profiles: profiles) } catch { throw EngineError(error) }
        return rows.map { r in
            ExportRowReport(record: r.record.rawValue, id: r.id, time: r.timeUTC, timeMs: r.time.millisecondsSince1970, profile: r.profile,
                            reason: r.record == .ledger ? r.what : nil, kind: r.record == .event ? r.what : nil,
                            deltaSeconds: r.deltaSeconds, entry: r.entry, clientIP: r.clientIP, text: r.text,
                            payload: r.payload.flatMap(JSONValue.init(text:)))
        }
    }
}
