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
                  nextChange: r.status.nextChange, openUntil: openUntil, nextState: r.status.nextState?.name, reasons: r.status.reasons,
                  aroundTheClock: r.aroundTheClock, bypassRestsUntil: r.bypassRestsUntil)
        allowanceLeftSeconds = r.allowanceLeftSeconds
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

extension EventReport {
    /// One `events` row, with a rule change's or a refusal's details typed (SPEC §12).
    package init(_ e: StoredEvent) {
        let change = e.ruleChange.map { RuleChangeInfo(change: $0.change, actor: $0.actor, rule: $0.rule, before: $0.before, entries: $0.entries) }
        let refusal = e.refusalRecord.map { r in
            RefusalInfo(rule: r.rule.wireName, subject: r.subject, opensAt: r.opensAt, reason: r.reason, message: r.message,
                        action: r.action, actor: r.actor, curfew: r.curfew, count: r.count, lastAt: r.lastAt, folded: r.folded)
        }
        self.init(id: e.id, profile: e.profile, time: e.time, kind: e.kind.rawValue, entry: e.entry?.rawValue, message: e.message,
                  ruleChange: change, refusal: refusal, clientIP: e.clientIP)
    }
}

extension StatusReport {
    /// `scrolloff status` (SPEC §13).
    package init(_ s: ProfileStatus) {
        self.init(profile: s.profile, now: s.now, entries: s.entries.map(EntryReport.init),
                  peeksLeftToday: s.credit.peeksLeftToday, tokensLeftMonth: s.credit.tokensLeftThisMonth,
                  balanceSeconds: s.credit.balanceSeconds, grants: s.credit.grantsInUse.map(GrantReport.init),
                  strictCurfewUntil: s.strictCurfewUntil, focus: s.focus.map(FocusReport.init),
                  requests: s.requests.map(TimeRequestInfo.init))
        pause = s.pause.map { PauseReport($0, profile: s.profile, now: s.now) }
        allowances = s.allowances.map(AllowanceInfo.init)
    }
}

extension WalletReport {
    /// `scrolloff wallet` (SPEC §4, §13): a batch's origin as `earned` (with its day), `starter` or `adjustment`.
    package init(_ w: WalletReading) {
        let batches = w.batches.map { b -> BatchReport in
            let (origin, day): (String, String?) = switch b.origin {
            case .earned(let d): ("earned", d.description)
            case .starter: ("starter", nil)
            case .adjustment: ("adjustment", nil)
            case .allowance(let d): ("allowance", d.description)
            }
            return BatchReport(origin: origin, earnedOn: day, remainingSeconds: b.remaining, expiresAt: b.expiresAt, earmark: b.earmark?.rawValue)
        }
        self.init(profile: w.profile, balanceSeconds: w.credit.balanceSeconds, earnedTodaySeconds: w.credit.earnedTodaySeconds,
                  spentTodaySeconds: w.credit.spentTodaySeconds, batches: batches, nextAwardAt: w.credit.nextAwardAt,
                  earningFrozenUntil: w.credit.earningFrozenUntil, grants: w.credit.grantsInUse.map(GrantReport.init), now: w.now)
        allowances = w.allowances.map(AllowanceInfo.init)
    }
}

extension ChangeActor {
    /// "alice (uid 1000)", "root (uid 0)", or "uid 1234" for a uid without a name: the actor of a
    /// request on the control socket, named from its peer credentials.
    static func describe(_ caller: CallerIdentity) -> String {
        let name = GroupMembershipAuthorizer.name(of: caller)
        return name.hasPrefix("uid ") ? name : "\(name) (uid \(caller.uid))"
    }
}
