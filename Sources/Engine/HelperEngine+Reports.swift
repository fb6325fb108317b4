import ControlAPI
import DomainLists
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
    public func status(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> StatusReport {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        let credit = p.account.status(at: now)
        return StatusReport(
            profile: p.name, now: now,
            // An entry whose rules are all gone (a focus session over) has nothing to report.
            entries: p.namedEntries(at: now).map { Self.entryReport(p, $0, at: now) }.filter { $0.state != .none },
            peeksLeftToday: credit.peeksLeftToday, tokensLeftMonth: credit.tokensLeftThisMonth,
            balanceSeconds: credit.balanceSeconds, grants: credit.grantsInUse.map(GrantReport.init),
            strictCurfewUntil: p.rules.strictCurfew(at: now)?.occurrence.end,
            focus: p.focusSessions.filter { $0.isActive(at: now) }.sorted { $0.end < $1.end }.map {
                FocusReport(id: $0.id, entries: $0.entries.map(\.rawValue).sorted(), start: $0.start, end: $0.end, reason: $0.reason)
            },
            requests: recentTimeRequests(profile: p.name, now: now))
    }

    /// `scrolloff wallet` (SPEC §4, §13), to the second (on a copy; see `status`).
    public func wallet(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> WalletReport {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        let credit = p.account.status(at: now)
        let batches = p.account.wallet.state.batches.map { b -> BatchReport in
            let (origin, day): (String, String?) = switch b.origin {
            case .earned(let d): ("earned", d.description)
            case .starter: ("starter", nil)
            case .adjustment: ("adjustment", nil)
            }
            return BatchReport(origin: origin, earnedOn: day, remainingSeconds: b.remaining, expiresAt: b.expiresAt, earmark: b.earmark?.rawValue)
        }
        return WalletReport(
            profile: p.name, balanceSeconds: credit.balanceSeconds, earnedTodaySeconds: credit.earnedTodaySeconds,
            spentTodaySeconds: credit.spentTodaySeconds, batches: batches, nextAwardAt: credit.nextAwardAt,
            earningFrozenUntil: credit.earningFrozenUntil, grants: credit.grantsInUse.map(GrantReport.init), now: now)
    }

    /// `scrolloff events [--since DATE]`: the profile's events and machine-wide ones (tamper), oldest first.
    /// Urges still waiting for their batch are written first, so the list is complete.
    public func events(since: Instant? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> [EventReport] {
        _ = try profileIndex(profile, in: profiles)
        try flushUrges()
        let rows: [StoredEvent]
        do { rows = try store.events(since: since, profile: profile, kinds: nil) } catch { throw EngineError(error) }
        return rows.map(Self.eventReport)
    }

    /// `scrolloff services [--category C]`: the catalog with each service's state in `profile`.
    public func services(category: String? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> [ServiceReport] {
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
        return chosen.map { s in
            ServiceReport(id: s.id, name: s.name, category: s.category.rawValue, note: s.note,
                          state: rules.state(of: EntryID(s.id), at: now).name)
        }
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
