// ControlAPI for stats and the digest only: the weekly digest is stored, and handed to its hook, as
// `StatsReport`'s JSON (InsightChecks, DigestHook), so that answer's wire form is also its stored form.
import ControlAPI
import DomainLists
import Foundation
import Logging
import ScrollOffCore
import Store

/// The trusted clock for `doctor` (SPEC §11).
public struct ClockReport: Hashable, Sendable, Codable {
    public var trusted: Instant
    public var wall: Instant
    /// `wallClock`, `sameBootElapsed`, `lastTrusted` or `awaitingWallClock`.
    public var basis: String
    /// Whether the system clock is within 10 minutes of the trusted clock.
    public var agrees: Bool
}

extension HelperEngine {
    /// `scrolloff status` (SPEC §13): every entry the profile names with its state, lock and next
    /// change; peeks and tokens left; running grants with their tasks. Read-only: the wallet is
    /// brought to the second on a copy, so reading never writes.
    public func status(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> ProfileStatus {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        return ProfileStatus(
            profile: p.name, now: now,
            // An entry whose rules are all gone (a focus session over) has nothing to report.
            entries: p.namedEntries(at: now).map { Self.entryReading(p, $0, at: now) }.filter { $0.status.state.kind != .none },
            credit: p.account.status(at: now),
            strictCurfewUntil: p.rules.strictCurfew(at: now)?.occurrence.end,
            focus: p.focusSessions.filter { $0.isActive(at: now) }.sorted { $0.end < $1.end },
            requests: requests.recent(profile: p.name, now: now),
            pause: p.rules.pause(at: now),
            allowances: p.allowances.map { Supervision.reading($0, in: p, at: now) })
    }

    /// `scrolloff wallet` (SPEC §4, §13), to the second (on a copy; see `status`).
    public func wallet(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> WalletReading {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        return WalletReading(profile: p.name, credit: p.account.status(at: now), batches: p.account.wallet.state.batches, now: now,
                             allowances: p.allowances.map { Supervision.reading($0, in: p, at: now) })
    }

    /// `scrolloff events [--since DATE]`: the profile's events and machine-wide ones (tamper), oldest first.
    /// Urges still waiting for their batch are written first, so the list is complete.
    public func events(since: Instant? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> [StoredEvent] {
        _ = try profileIndex(profile, in: profiles)
        try flushUrges()
        do { return try store.events(since: since, profile: profile, kinds: nil) } catch { throw EngineError(error) }
    }

    /// The events after row `id` (oldest first) of `profiles` and the machine-wide ones, at most
    /// `limit`: where a live reader resumes (`EventFeed`; the ids are the event log's, so across a
    /// restart too). Urges still waiting for their batch are written first.
    public func events(after id: Int64, profiles: Set<String>, limit: Int) throws(EngineError) -> [StoredEvent] {
        try flushUrges()
        do {
            return try store.events(afterID: id, profiles: profiles, limit: limit)
        } catch { throw EngineError(error) }
    }

    /// The highest event id written so far (0 when none): where a new live reader starts.
    public func latestEventID() throws(EngineError) -> Int64 {
        do { return try store.latestEventID() } catch { throw EngineError(error) }
    }

    /// `scrolloff services [--category C]`: the catalog with each service's state in `profile`.
    public func services(category: String? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> [ServiceReading] {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        var chosen = catalog.services
        if let category {
            guard let c = ServiceCategory(rawValue: category.lowercased()) else {
                throw .notFound("“\(category)” is not a category; there are \(catalog.categories.map(\.rawValue).joined(separator: ", ")).")
            }
            chosen = catalog.services(in: c)
        }
        let rules = p.rules
        return chosen.map { ServiceReading(service: $0, state: rules.state(of: EntryID($0.id), at: now).kind) }
    }

    /// `scrolloff export --csv` (SPEC §12): the ledger and events, as the store writes them.
    /// Pending urges are written first so the export is complete. `profiles`: only the rows of
    /// these (the profiles the caller may view, SPEC §11); nil for every profile.
    public func exportCSV(profiles: Set<String>? = nil) throws(EngineError) -> String {
        try flushUrges()
        do { return try store.exportCSV(profiles: profiles) } catch { throw EngineError(error) }
    }

    /// The clock as `doctor` reports it; a disagreement has been recorded as a tamper event.
    public func clockReport() -> ClockReport {
        let reading = timeSource.read()
        let now = advanceClock()
        return ClockReport(trusted: now, wall: reading.wall, basis: clock.basis.rawValue, agrees: clock.agrees(withWall: reading.wall))
    }

    /// `verifyLedger` for `doctor` and the kill -9 test: per profile, whether balance == sum of ledger.
    public func ledgerProblems() throws(EngineError) -> [String] {
        do { return try store.verifyLedger().compactMap(\.problem) } catch { throw EngineError(error) }
    }
}

// MARK: - Insights: stats, the weekly digest and its hook

extension HelperEngine {
    /// What is approximate about the numbers, said with every report.
    static let statsNotes = [
        "Protected time counts only the time the helper was running.",
        "An urge counts as resisted when no grant for that entry started within 5 minutes of it; the last 5 minutes may still change.",
        "The streak counts days with no token used and no more credit spent than earned.",
    ]

    /// `scrolloff stats [--day|--week|--month|--year]` (SPEC §7): the core's `Insights` over
    /// the store's days (raw rows for 90 days, rollups before), as of the trusted now.
    public func stats(_ period: StatsPeriod, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> StatsReport {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        try flushUrges()
        // Write the protected time up to now, so today's number is current.
        var change = StateChange()
        var work = profiles
        try commit(&change, profiles: &work, now: now)
        let days = try insightDays(profile)
        return Self.report(period, profile: profile, days: days, today: p.calendar.day(of: now), calendar: p.calendar)
    }

    /// `scrolloff digest`: the latest weekly digest written for `profile`, and when the next is due.
    public func digest(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> DigestReport {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        let event: StoredEvent?
        do { event = try store.latestEvent(kind: .weeklyDigest, profile: profile) } catch { throw EngineError(error) }
        let report = event?.payload.flatMap { try? ControlJSON.decoder().decode(StatsReport.self, from: Data($0.utf8)) }
        return DigestReport(profile: profile, digest: report, writtenAt: report == nil ? nil : event?.time,
                            nextAt: WeeklyDigest.next(after: now, calendar: p.calendar), now: now)
    }

    static func report(_ period: StatsPeriod, profile: String, days: [InsightDay], today: LocalCalendar.Day,
                       calendar: LocalCalendar) -> StatsReport {
        let insights = Insights(days: days, today: today, periodDays: period.days, calendar: calendar)
        return StatsReport(profile: profile, period: period, insights: insights, calendar: calendar, notes: statsNotes)
    }

    func insightDays(_ profile: String) throws(EngineError) -> [InsightDay] {
        do { return try store.dailyTotals(profile: profile).map(\.insight) } catch { throw EngineError(error) }
    }

    /// Records milestones reached and the week's digest when due (SPEC §7), each once
    /// (`InsightChecks.look`), and logs failing looks with back-off.
    /// - Returns: the digests written now, for the delivery hook.
    @discardableResult
    func recordInsightMarks(now: Instant) -> [(profile: String, report: StatsReport)] {
        let (written, failures) = insightChecks.look(profiles: profiles, store: store, now: now, logger: logger, feed: eventFeed)
        insightChecks.note(failures: failures, at: now, logger: logger)
        return written
    }

    /// Hands each digest written now to the hook, off the engine's actor.
    func deliverDigests(_ written: [(profile: String, report: StatsReport)]) {
        let settings = digestHook
        guard !settings.command.isEmpty else { return }
        let logger = self.logger
        let running = runningHooks
        for w in written { Task.detached { await DigestHook.deliver(w.report, settings: settings, logger: logger, running: running) } }
    }

    /// `[digest]` from the configuration, at start and on reload.
    public func setDigestHook(_ settings: DigestHookSettings) { digestHook = settings }

    /// `[notify]` from the configuration, at start and on reload.
    public func setNotifyHook(_ settings: DigestHookSettings) { notifyHook = settings }

    /// Runs `[notify] command` for one event (SPEC §9a: owners are told of a new request for
    /// time), off the engine's actor, with `json` (the event as the stream has it) on standard input.
    public func deliverNotifyHook(json: Data, event: StoredEvent) {
        let settings = notifyHook
        guard !settings.command.isEmpty else { return }
        let logger = self.logger
        let running = runningHooks
        Task.detached { await DigestHook.run(json: json, settings: settings, what: "notify hook", environment: [
            "SCROLLOFF_PROFILE": event.profile ?? "", "SCROLLOFF_EVENT": event.kind.rawValue, "SCROLLOFF_MESSAGE": event.message ?? "",
        ], metadata: ["profile": "\(event.profile ?? "")", "event.id": "\(event.id ?? 0)", "hook.command": "\(settings.command[0])"], logger: logger, running: running) }
    }
}

// MARK: - The event log: what other modules saw, refusals, list changes, the export

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
        let event = listChangeEvent(added: added, name: name, url: url, at: now)
        do { _ = try commitReturning(StateChange([.appendEvent(event)]), now: now) } catch {
            logger.warning("a list change could not be recorded as an event", metadata: ["list.name": "\(name)", "error": "\(error)"])
        }
    }

    /// The event of a list added or removed, with who did it (SPEC §12).
    func listChangeEvent(added: Bool, name: String, url: String, at now: Instant) -> StoredEvent {
        let rule = "list \(name) from \(url)"
        let record = RuleChangeRecord(change: added ? .listAdded : .listRemoved, actor: currentActor, rule: rule, entries: [name])
        return StoredEvent(record, profile: nil, entry: EntryID(name), at: now,
                           message: "\(added ? "Added" : "Removed") \(rule) — by \(currentActor).")
    }
}

// MARK: Reading the log

extension HelperEngine {
    /// `scrolloff export --json` (SPEC §12): every ledger row and event still kept, typed, the
    /// same rows as the CSV.
    public func exportRows(profiles: Set<String>? = nil) throws(EngineError) -> [ExportRow] {
        try flushUrges()
        do { return try store.exportRows(profiles: profiles) } catch { throw EngineError(error) }
    }
}
