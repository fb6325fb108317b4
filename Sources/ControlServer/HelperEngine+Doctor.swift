import ControlAPI
import DNSWire
import DomainLists
import Enforcement
import Engine
import ScrollOffCore
import Store

/// The engine's share of `scrolloff doctor` (SPEC §11): the clock, the tamper events, the
/// database's own check, and a name that is blocked right now.
extension HelperEngine {
    /// Tamper events this recent are shown by `doctor`.
    static let doctorTamperWindow = Span.hours(24)
    /// Names tried per blocking entry when looking for a probe name.
    static let probeCandidatesPerEntry = 4

    struct DoctorEngineFacts: Sendable {
        var clock: DoctorClockFacts
        var database: DoctorDatabaseFacts
        /// A blocked name and its entry; nil when nothing blocks for the profile and client.
        var blocked: (name: String, entry: EntryID)?
    }

    /// - Parameters:
    ///   - profile: the caller's profile; its blocking entries give the probe name.
    ///   - probeClient: the address the CLI's probe will come from, so the name chosen is one the
    ///     sinkhole really blocks for that query (the client's network may route to another profile).
    func doctorFacts(profile: String, probeClient: ClientIP?) -> DoctorEngineFacts {
        let report = clockReport()
        var problems: [String] = []
        var tamper: [DoctorTamperEvent] = []
        do {
            // The clock check shows clock jumps only; hosts-file edits are the hosts check's.
            tamper = try store.events(since: report.trusted - Self.doctorTamperWindow, profile: nil, kinds: [.tamper])
                .filter(\.isClockJump).map { DoctorTamperEvent(time: $0.time.date, message: $0.message ?? "The system clock moved.") }
        } catch {
            problems.append("reading the tamper events failed: \(error)")
        }
        do {
            problems += try store.integrityCheck().problems.prefix(3)
        } catch {
            // A shared store's check is no PRAGMA: it reads the household database, which may be away.
            problems.append(store.isShared ? "the household database could not be checked: \(error)" : "PRAGMA quick_check could not run: \(error)")
        }
        let clock = DoctorClockFacts(
            trusted: report.trusted.date, wall: report.wall.date, offsetSeconds: (report.wall - report.trusted).milliseconds / 1000,
            thresholdSeconds: TrustedClock.jumpThreshold.milliseconds / 1000, basis: report.basis, recentTamper: tamper,
            tamperWindowSeconds: Self.doctorTamperWindow.milliseconds / 1000)
        return DoctorEngineFacts(
            clock: clock,
            database: DoctorDatabaseFacts(path: store.location, problems: problems, writeFailure: writeFailure().map {
                DoctorWriteFailure(since: $0.since.date, attempts: $0.attempts, error: $0.error)
            }),
            blocked: probeClient.flatMap { blockedProbeName(profile: profile, client: $0) })
    }

    /// A name of an entry blocking now for `profile` that the DNS path blocks for `client`, checked
    /// with the hot path's own `decide` on the enforcement in force, so the probe asks a name the
    /// sinkhole must answer as blocked (an always-allowed name or another profile's client is skipped).
    func blockedProbeName(profile: String, client: ClientIP) -> (name: String, entry: EntryID)? {
        let enforcement = box.enforcement
        guard let index = enforcement.profileNames.firstIndex(of: profile) else { return nil }
        let now = enforcement.now()
        for entry in enforcement.blockingEntries(profile: index, at: now) {
            for candidate in probeCandidates(for: entry) {
                guard let wire = try? DNSName(candidate).wireBytes else { continue }
                let decision = wire.withUnsafeBytes { enforcement.decide(wire: $0, client: client, now: now) }
                if decision.blocked {
                    // The probe that follows is a check, not an urge (SPEC §7).
                    urges.excuseProbe(profile: decision.profile, client: client, now: now)
                    return (candidate, entry)
                }
            }
        }
        return nil
    }

    /// A few names an entry blocks: a catalog service's or a list's first block rules, or the
    /// custom domain itself. A rule for subdomains only is probed as its `www.` name. A list kept
    /// as its stored copy is read only as far as its first lines.
    func probeCandidates(for entry: EntryID) -> [String] {
        let rules = catalog.service(id: entry.rawValue)?.rules ?? lists[entry.rawValue]?.leading()
        guard let rules else { return [entry.rawValue] }
        var names: [String] = []
        for rule in rules where rule.action == .block {
            names.append(rule.scope == .subdomainsOnly ? "www." + rule.name.text : rule.name.text)
            if names.count == Self.probeCandidatesPerEntry { break }
        }
        return names
    }
}
