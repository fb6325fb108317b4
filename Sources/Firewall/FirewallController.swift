import ControlAPI
import DNSWire
import Foundation
import Logging
import NIOCore
import Sinkhole

/// Keeps the `inet scrolloff` table in line with the configuration (SPEC §9b): puts it in place
/// once the DNS listeners are bound, replaces it when the DoH addresses or the settings change
/// (reload), and removes it at stop and when a reload turns the firewall off.
///
/// If the helper dies without stopping (kill -9, a crash), the table stays: DNS keeps being sent to
/// the sinkhole's address, where nothing answers, so lookups fail until systemd restarts the helper
/// (`Restart=on-failure`, 2 s), which replaces the table. Failing closed is the point: a helper
/// made to crash must not open the bypass. The same holds when a part of the helper fails and the
/// others are cancelled (`FirewallService`). A deliberate stop (`systemctl stop`) removes the
/// table, so stopping Scroll Off gives the machine its DNS back.
public actor FirewallController {
    private var settings: FirewallSettings
    private let nft: NFTables?
    private let listeners: BoundListeners
    /// The shipped resolver addresses (`<catalog>/doh/resolver-addresses.txt`).
    private let shippedAddresses: [String]
    /// Names of the DoH endpoint list, resolved for their addresses.
    private let endpointNames: [String]
    /// Asks the upstreams (through the forwarder, whose sockets carry the mark) for a name's addresses.
    private var resolve: @Sendable (String) async -> [String] = { _ in [] }
    private let logger: Logger
    /// Addresses the endpoint names resolved to at the last refresh.
    private var resolved: [String] = []
    /// The ruleset in force; nil when the table is not ours to keep (off, or removed).
    private var applied: FirewallRuleset?
    /// Counts of tables replaced or removed since start.
    private var carried: [String: UInt64] = [:]
    private var limiter = BypassEventLimiter()
    /// Attempts read from a table about to be replaced or removed (which empties its sets).
    private var pending: [BypassAttempt] = []
    /// Attempts per device since start (every read, before the event limiter thins them).
    private var tally = ClientAttemptTally()
    /// What each attempt-set element had counted at the last read (`NFTables.takeAttempts`);
    /// emptied whenever the table, and so its sets, is made anew.
    private var attemptCounts: [BypassAttempt: UInt64] = [:]

    package init(settings: FirewallSettings, stateDirectory: String, listeners: BoundListeners, catalogFolder: String, logger: Logger) {
        self.init(settings: settings, nft: NFTables(folder: stateDirectory), listeners: listeners, catalogFolder: catalogFolder, logger: logger)
    }

    /// With a given `nft` (tests run one inside a network namespace of their own).
    init(settings: FirewallSettings, nft: NFTables?, listeners: BoundListeners, catalogFolder: String, logger: Logger) {
        self.settings = settings
        self.nft = nft
        self.listeners = listeners
        shippedAddresses = Self.readList(catalogFolder + "/doh/resolver-addresses.txt").filter { FirewallValues.addressFamily($0) != nil }
        endpointNames = Self.readList(catalogFolder + "/doh/encrypted-dns.list")
        self.logger = logger
    }

    /// How names are resolved: through the forwarder, made after the control server that reports
    /// on this controller.
    package func resolve(through resolve: @escaping @Sendable (String) async -> [String]) { self.resolve = resolve }

    /// Checks at start, before anything listens, that the table can be kept at all.
    package nonisolated static func checkInstalled(_ settings: FirewallSettings) throws(FirewallError) {
        guard settings.enabled else { return }
        guard NFTables.candidates.contains(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { throw .notInstalled }
    }

    package var isEnabled: Bool { settings.enabled }

    /// The ruleset for the settings, listeners and addresses now.
    func ruleset() -> FirewallRuleset {
        let bound = listeners.current.filter { $0.transport == .udp }.map { HostPortText(host: $0.address.host, port: $0.address.port) }
        return FirewallRuleset(settings: settings, listeners: bound, dohAddresses: shippedAddresses + resolved)
    }

    /// Puts the table in line with the settings: applied when on (only if it changed),
    /// removed when off.
    func synchronize() throws(FirewallError) {
        guard settings.enabled else {
            try remove()
            return
        }
        guard let nft else { throw .notInstalled }
        let next = ruleset()
        guard next != applied else { return }
        // Only the DoH addresses changed (a list refresh): the sets are refilled in place, and the
        // counters and attempt sets go on counting. If that fails (someone removed our table by
        // hand), the whole table is put back below.
        if let applied, let update = next.setUpdate(from: applied), (try? nft.apply(update, file: "firewall-sets.nft")) != nil {
            self.applied = next
            logger.info("firewall: DoH address sets updated", metadata: [
                "firewall.doh_addresses": "\(next.dohIPv4.count + next.dohIPv6.count)",
            ])
            return
        }
        // Replacing the table starts its counters from zero: what they held is kept here first.
        if applied != nil {
            carry(nft.counters())
            takeAttempts(from: nft)
        }
        try nft.apply(next.text)
        attemptCounts = [:]
        logger.notice("firewall: table inet scrolloff in place", metadata: [
            "firewall.mode": "\(settings.mode.rawValue)",
            "firewall.doh_addresses": "\(next.dohIPv4.count + next.dohIPv6.count)",
        ])
        applied = next
    }

    /// Takes the table away (stop, or a reload that turns the firewall off). Only ever our table.
    func remove() throws(FirewallError) {
        guard applied != nil else { return }
        guard let nft else { throw .notInstalled }
        carry(nft.counters())
        takeAttempts(from: nft)
        try nft.apply(FirewallRuleset.removal)
        attemptCounts = [:]
        applied = nil
        logger.notice("firewall: table inet scrolloff removed")
    }

    /// Puts the table back when it is in force here but not in the kernel (someone deleted it by
    /// hand); called at every reload, which is what `doctor` says to do then. What the deleted
    /// table had counted is gone with it. Returns whether it put the table back.
    package func restoreIfMissing() throws(FirewallError) -> Bool {
        guard settings.enabled, applied != nil, let nft, !nft.tableExists() else { return false }
        let next = ruleset()
        try nft.apply(next.text)
        attemptCounts = [:]
        applied = next
        logger.notice("firewall: table inet scrolloff was gone from the kernel; put back")
        return true
    }

    /// New settings from a reload: in force at once.
    /// When nft refuses, the settings and the table in force stay as they were (the reload is
    /// refused whole, ARCHITECTURE principle 5).
    package func update(_ next: FirewallSettings) throws(FirewallError) {
        guard next != settings else { return }
        let previous = settings
        settings = next
        do {
            try synchronize()
        } catch {
            settings = previous
            throw error
        }
    }

    /// Resolves the DoH endpoint names again (at start and with every list refresh) and updates
    /// the set when the addresses changed. A name that does not resolve adds nothing; the shipped
    /// addresses stay either way.
    package func refreshAddresses() async {
        guard settings.enabled, settings.resolveDoHNames, !endpointNames.isEmpty else { return }
        var found = Set<String>()
        // A few at a time: the forwarder keeps at most 512 questions outstanding for every client.
        let names = endpointNames
        let resolve = self.resolve
        await withTaskGroup(of: [String].self) { group in
            var next = 0
            for _ in 0..<min(8, names.count) {
                let name = names[next]; next += 1
                group.addTask { await resolve(name) }
            }
            while let addresses = await group.next() {
                found.formUnion(addresses.filter { FirewallValues.addressFamily($0) != nil && !Self.isUnusable($0) })
                if next < names.count {
                    let name = names[next]; next += 1
                    group.addTask { await resolve(name) }
                }
            }
        }
        let sorted = found.sorted()
        guard sorted != resolved else { return }
        resolved = sorted
        logger.info("firewall: \(sorted.count) addresses of DNS-over-HTTPS endpoints resolved")
        do { try synchronize() } catch { logger.error("firewall: \(error)") }
    }

    /// Packets each named counter has counted since the helper started, over every table it
    /// applied (a reload that changes the settings replaces the table, whose counters start at zero).
    package func counters() -> [String: UInt64] {
        var total = carried
        if applied != nil, let now = nft?.counters() { total.merge(now, uniquingKeysWith: +) }
        return total
    }

    private func carry(_ counts: [String: UInt64]?) {
        guard let counts else { return }
        carried.merge(counts, uniquingKeysWith: +)
    }

    /// The attempts caught since the last call that may become events now (`BypassEventLimiter`).
    func takeAttempts(now: Date) -> [BypassAttempt] {
        if applied != nil, let nft { takeAttempts(from: nft) }
        let taken = pending
        pending = []
        return limiter.admit(taken, now: now)
    }

    /// Attempts per device and kind (`dns`, `dot`, `doh`) since the helper started, as of the last
    /// read of the attempt sets (every 2 s).
    package func clientAttempts() -> [String: [String: UInt64]] { tally.counts }

    /// Reads the attempt sets; what each element counted since the last read is taken.
    private func takeAttempts(from nft: NFTables) {
        let (caught, seen) = nft.takeAttempts(previous: attemptCounts)
        attemptCounts = seen
        take(caught)
    }

    private func take(_ caught: [CaughtAttempt]) {
        tally.add(caught)
        pending += caught.map(\.attempt)
    }

    /// What `doctor` reports (SPEC §9b); nil while the firewall is off.
    package func doctorFacts() -> DoctorFirewallFacts? {
        guard settings.enabled else { return nil }
        let set = ruleset()
        var facts = DoctorFirewallFacts(
            mode: settings.mode.rawValue, tableInPlace: nft?.tableExists() ?? false,
            dohAddresses: set.dohIPv4.count + set.dohIPv6.count, attempts: counters())
        facts.topClients = tally.top(3).map { DoctorFirewallClient(address: $0.client, attempts: $0.attempts) }
        return facts
    }

    /// Answers that must never enter the set: a sinkholed name's 0.0.0.0 or ::, and loopback.
    nonisolated static func isUnusable(_ address: String) -> Bool {
        address == "0.0.0.0" || address == "::" || address.hasPrefix("127.") || address == "::1"
    }

    /// A plain list: one item a line, `#` comments and blank lines skipped.
    nonisolated static func readList(_ path: String) -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(whereSeparator: \.isNewline).compactMap { line in
            let item = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?
                .trimmingCharacters(in: .whitespaces) ?? ""
            return item.isEmpty ? nil : item
        }
    }
}

extension FirewallController {
    /// The A and AAAA addresses of `name` as the upstreams answer, through the forwarder (whose
    /// sockets carry the firewall's mark, so the question is not redirected to the sinkhole).
    package static func addresses(of name: String, through forwarder: Forwarder, on loop: any EventLoop) async -> [String] {
        guard let wire = try? DNSName(name.lowercased()).wireBytes else { return [] }
        var found: [String] = []
        for type in [DNSType.a, DNSType.aaaa] {
            let question = OutgoingQuestion(name: wire, type: type, class: .in, dnssecOK: false, checkingDisabled: false)
            if let answer = try? await forwarder.resolve(question, on: loop).get() { found += answer.addresses }
        }
        return found
    }
}
