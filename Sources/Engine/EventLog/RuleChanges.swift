import Foundation
import ScrollOffCore
import Store

/// The `ruleChange` events (SPEC §12) a command's change of the rules makes, in words:
/// computed from the profiles before and after, so every path that changes a rule is recorded
/// the same way. Pure: the engine appends what this returns to the command's change.
enum RuleChanges {
    /// The `ruleChange` events for what a command changed, from the rules before (`old`) and after
    /// (`new`): one diff of the state the command produced, so every path that changes a rule
    /// (the CLI, the household page, the configuration file, the timer applying held-back
    /// changes) is recorded the same way and none needs its own copy.
    static func events(from old: [ProfileRuntime], to new: [ProfileRuntime], at now: Instant, actor: String) -> [StoredEvent] {
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
            // Pauses (SPEC §5a): a new one, or one lifted while in force.
            if p.pause != o.pause {
                if let pause = p.pause, pause.isActive(at: now) {
                    add(.paused, p.name, rule: pauseWords(pause), message: "Paused profile \(p.name): \(pauseWords(pause))")
                } else if let old = o.pause, old.isActive(at: now) {
                    add(.resumed, p.name, rule: pauseWords(old), message: "Resumed profile \(p.name) early (it was a \(pauseWords(old)))")
                }
            }
            // Daily allowances (SPEC §4a), by their entries.
            let oldAllowances = Dictionary(o.allowances.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
            for a in p.allowances where oldAllowances[a.key]?.secondsByWeekday != a.secondsByWeekday {
                add(.allowanceSet, p.name, rule: "daily allowance of \(a.words)", before: oldAllowances[a.key].map { "daily allowance of \($0.words)" },
                    entries: a.entries, message: "Set a daily allowance of \(a.words)")
            }
            for a in o.allowances where !p.allowances.contains(where: { $0.key == a.key }) {
                add(.allowanceCleared, p.name, rule: "daily allowance of \(a.words)", entries: a.entries,
                    message: "Removed the daily allowance of \(a.words)")
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

    /// A `pauseEnded` event when `p`'s pause ended by itself in `(after, through]` (SPEC §5a), at its end.
    static func pauseEnds(of p: ProfileRuntime, after: Instant, through now: Instant) -> [StoredEvent] {
        guard let pause = p.pause, pause.end > after, pause.end <= now else { return [] }
        let record = RuleChangeRecord(change: .pauseEnded, actor: ChangeActor.helper, rule: pauseWords(pause))
        return [StoredEvent(record, profile: p.name, at: pause.end, message: "The pause of \(p.name) ended as planned; its rules apply as before.")]
    }

    static func pauseWords(_ p: Pause) -> String {
        "pause of every name but the allow lists for \(SpanWords.describe(p.end - p.start))" + (p.reason.map { " (reason “\($0)”)" } ?? "")
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
}
