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
