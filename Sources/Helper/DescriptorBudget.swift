#if canImport(Glibc)
import Config
import ControlServer
import Glibc
#endif
import Foundation
import HouseholdPage
import Logging
import ServiceKit
import Sinkhole

/// The descriptors each part of the helper may hold (`DescriptorBudget`).
struct DescriptorShares: Sendable, Equatable {
    var tcp: TCPLimits
    var control: ControlConnectionLimits
    /// The household page's connections in total and per client address; 0 when it is off.
    var webConnections: Int
    var webConnectionsPerClient: Int
    /// Questions asked upstream over TCP at once (`ForwarderConfiguration.maximumTCPExchanges`).
    var upstreamTCP: Int
}

/// Fits what each part of the helper may hold to the process's descriptor limit (RLIMIT_NOFILE).
///
/// Every TCP, control and household-page connection holds a descriptor, and so does every question
/// asked upstream over TCP (after TC or a spoofing suspicion). If the limits allowed more than the
/// process has, a flood would run it out of descriptors, and running out is not survivable here:
/// besides forwarding and list downloads failing, libdispatch, which Swift's concurrency runs on,
/// aborts the process when its pool monitor cannot open `/proc/<tid>/stat` (seen in CI as SIGILL
/// under a connection flood at `prlimit --nofile=200`). So the limits are lowered to fit, every
/// listener stops accepting at its cap plus a small slack (`AcceptGate`), and a flood is refused at
/// the lowered caps with descriptors to spare; the accept back-off
/// (`AcceptFailureLogger`) remains for a limit lowered from outside or the system's (ENFILE).
enum DescriptorBudget {
    /// Descriptors kept besides the pools below: listeners, the database and its journal, list
    /// downloads, `nft` pipes, log files and the runtime's own (libdispatch reads `/proc`). An idle
    /// helper with two threads holds about 34 of these.
    static let fixed = 48
    /// The upstream UDP sockets: `UpstreamSocketPool`'s 16 per event loop and address family.
    static func upstreamSockets(_ configuration: HelperConfiguration) -> Int {
        let families = Set(configuration.upstreams.map { $0.host.contains(":") }).count
        return 16 * configuration.eventLoops * max(families, 1)
    }
    /// Listeners with an `AcceptGate` of their own (DNS over TCP, control, page, metrics): each may
    /// hold its cap plus the gate's slack.
    static func gates(_ configuration: HelperConfiguration) -> Int {
        2 + configuration.webListenAddresses.count + (configuration.metricsListen == nil ? 0 : 1)
    }
    /// The metrics endpoint's connections, when it listens (`MetricsServer.connectionLimit`).
    static func metrics(_ configuration: HelperConfiguration) -> Int {
        configuration.metricsListen == nil ? 0 : MetricsServer.connectionLimit
    }
    /// Below these, a part would not be worth serving: the helper refuses to start instead.
    static let smallest = (tcp: 4, control: 6, web: 4, upstreamTCP: 16)
    /// `ForwarderConfiguration`'s default for questions over TCP at once.
    static let upstreamTCP = ForwarderConfiguration(upstreams: []).maximumTCPExchanges

    /// The configured limits as shares, before fitting.
    static func configured(_ configuration: HelperConfiguration) -> DescriptorShares {
        let web = configuration.webListen == nil ? 0 : WebConnectionLimit.defaultTotal
        return DescriptorShares(
            tcp: configuration.tcp, control: configuration.control, webConnections: web,
            webConnectionsPerClient: min(WebConnectionLimit.defaultPerClient, web), upstreamTCP: upstreamTCP)
    }

    /// Descriptors the configured limits need, everything included.
    static func needed(_ configuration: HelperConfiguration) -> Int {
        let shares = configured(configuration)
        return kept(configuration) + shares.tcp.maximumConnections + shares.control.descriptors + shares.webConnections + shares.upstreamTCP
    }

    static func kept(_ configuration: HelperConfiguration, inherited: Int = 0) -> Int {
        fixed + inherited + upstreamSockets(configuration) + metrics(configuration) + gates(configuration) * AcceptGate.slack
    }

    /// Descriptors open before the helper opened any of its own, beyond standard input, output and
    /// error: whatever started it left them open, and each one counts against the limit (one
    /// numbered above the limit even stays open). Counted, not closed: some are meant for it
    /// (systemd's socket and notify descriptors).
    static func inheritedDescriptors() -> Int {
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 4
        return max(open - 4, 0)  // 0, 1, 2 and the directory listing's own
    }

    /// The shares that fit in `limit` descriptors: the configured ones when they fit, otherwise
    /// each part's room above its smallest share is lowered by the same factor.
    static func fit(_ configuration: HelperConfiguration, limit: Int, inherited: Int = 0) throws(HelperStartError) -> DescriptorShares {
        var shares = configured(configuration)
        let room = limit - kept(configuration, inherited: inherited)
        let web = shares.webConnections > 0
        let wanted = [shares.tcp.maximumConnections, shares.control.descriptors, shares.webConnections, shares.upstreamTCP]
        let floors = [smallest.tcp, smallest.control, web ? smallest.web : 0, smallest.upstreamTCP].enumerated().map { min($1, wanted[$0]) }
        guard wanted.reduce(0, +) > room else { return shares }
        let floorTotal = floors.reduce(0, +)
        guard room >= floorTotal else {
            throw HelperStartError(
                "the file descriptor limit (\(limit)) is too low to serve DNS safely: the helper needs at least \(kept(configuration, inherited: inherited) + floorTotal). "
                    + "Raise LimitNOFILE in the unit or `ulimit -n`")
        }
        let above = zip(wanted, floors).map { $0 - $1 }
        let spare = Double(room - floorTotal) / Double(above.reduce(0, +))
        let fitted = zip(floors, above).map { $0 + Int(Double($1) * spare) }
        shares.tcp.maximumConnections = fitted[0]
        shares.tcp.maximumConnectionsPerClient = min(shares.tcp.maximumConnectionsPerClient, fitted[0])
        // The administrator's share (two users' worth) comes out of the control part first. Neither
        // number may end above the configured one: rounding the per-user share down once gave the
        // total one more than configured ("lowered" from 64 to 65).
        let asked = shares.control
        let perUser = min(asked.perUser, max(1, fitted[1] * asked.perUser / wanted[1]))
        let total = min(asked.total, fitted[1] - 2 * perUser)
        shares.control = ControlConnectionLimits(total: total, perUser: min(perUser, total))
        shares.webConnections = fitted[2]
        shares.webConnectionsPerClient = min(shares.webConnectionsPerClient, fitted[2])
        shares.upstreamTCP = fitted[3]
        return shares
    }

    /// What `apply` does at a start: the soft limit to raise to (nil: leave it), the shares that fit,
    /// and the one warning to log (nil when nothing had to be lowered).
    struct Plan: Sendable {
        var raiseTo: Int?
        var shares: DescriptorShares
        var warning: String?
        /// Only the parts that were lowered, each as "configured -> fitted".
        var metadata: [String: String]
    }

    /// Decides `apply`'s steps from the soft and hard limits and the descriptors inherited: the
    /// need counts the inherited ones too, so a limit raised to it leaves nothing to lower.
    static func plan(_ configuration: HelperConfiguration, soft: Int, hard: Int, inherited: Int) throws(HelperStartError) -> Plan {
        let want = needed(configuration) + inherited
        let raiseTo = soft < want && hard > soft ? min(want, hard) : nil
        let available = raiseTo ?? soft
        let shares = try fit(configuration, limit: available, inherited: inherited)
        let asked = configured(configuration)
        var lowered: [(key: String, words: String, from: Int, to: Int)] = []
        func compare(_ key: String, _ words: String, _ from: Int, _ to: Int) {
            if to < from { lowered.append((key, words, from, to)) }
        }
        compare("dns.tcp_connections", "DNS-over-TCP connections", asked.tcp.maximumConnections, shares.tcp.maximumConnections)
        compare("helper.control_connections", "control connections", asked.control.total, shares.control.total)
        compare("helper.control_connections_per_user", "control connections per user", asked.control.perUser, shares.control.perUser)
        compare("web.connections", "household page connections", asked.webConnections, shares.webConnections)
        compare("upstream.tcp_exchanges", "upstream TCP questions", asked.upstreamTCP, shares.upstreamTCP)
        guard !lowered.isEmpty else { return Plan(raiseTo: raiseTo, shares: shares, warning: nil, metadata: [:]) }
        var metadata = ["descriptors.limit": "\(available)", "descriptors.needed": "\(want)"]
        for part in lowered { metadata[part.key] = "\(part.from) -> \(part.to)" }
        let parts = lowered.map { "\($0.words) \($0.from) → \($0.to)" }.joined(separator: ", ")
        let warning = "the file descriptor limit (\(available)) is below the \(want) the connection limits need, so they are lowered to fit: "
            + "\(parts). A flood is refused with descriptors to spare; raise LimitNOFILE (ulimit -n) to \(want) to serve them all"
        return Plan(raiseTo: raiseTo, shares: shares, warning: warning, metadata: metadata)
    }

    /// Raises the soft limit towards the hard one as far as the configured limits need (as Go's
    /// runtime does), then fits the limits to what the process has and says so once if it lowered them.
    static func apply(_ configuration: HelperConfiguration, logger: Logger) throws(HelperStartError) -> DescriptorShares {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return configured(configuration) }
        func int(_ value: rlim_t) -> Int { value >= rlim_t(Int.max) ? Int.max : Int(value) }
        let inherited = inheritedDescriptors()
        var plan = try Self.plan(configuration, soft: int(limit.rlim_cur), hard: int(limit.rlim_max), inherited: inherited)
        if let raise = plan.raiseTo {
            var next = limit
            next.rlim_cur = rlim_t(raise)
            // Refused (it should not be, below the hard limit): fit what the process has.
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &next) != 0 {
                plan = try Self.plan(configuration, soft: int(limit.rlim_cur), hard: int(limit.rlim_cur), inherited: inherited)
            }
        }
        if let warning = plan.warning {
            logger.warning("\(warning)", metadata: plan.metadata.mapValues { Logger.MetadataValue.string($0) })
        }
        return plan.shares
    }
}
