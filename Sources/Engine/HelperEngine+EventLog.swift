import ControlAPI
import Foundation
import Logging
import ScrollOffCore
import Store

extension HelperEngine {
    /// Refusals of a bypass that are the rules holding (a curfew, a lockout, peeks or tokens used
    /// up, no credit, a cap); "not blocked" and "already open" are not, and are not recorded.
    static let heldBypassRules: Set<Refusal.Rule> = [.curfew, .bypassLockout, .peeksUsedUp, .tokensUsedUp, .insufficientCredit,
                                                       .entryDailySpendCap, .cooldown, .curfewEditLock]
    /// Refusals of a loosening that are a lock holding (SPEC §2, §3).
    static let heldEditRules: Set<Refusal.Rule> = [.cooldown, .curfewEditLock]

    /// Who makes the change in progress.
    var currentActor: String { actorOverride ?? ChangeActor.current ?? ChangeActor.helper }

    // MARK: What other modules saw

    /// Records what another module saw (`ObservedEvent`: a hosts-file edit put back, caught bypass
    /// attempts) as events, in one small commit of their own. When the disk refuses it, it is held
    /// for the next commit like any other event, so a full disk loses no record of tampering.
    package func record(_ observed: some ObservedEvent) {
        guard !observed.isEmpty else { return }
        let now = advanceClock()
        observed.log(to: logger)
        var change = StateChange(observed.storedEvents(at: now).map { .appendEvent($0) })
        var work = profiles
        do {
            try commit(&change, profiles: &work, now: now)
        } catch {
            hold(change, profiles: work, now: now)
        }
    }

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
