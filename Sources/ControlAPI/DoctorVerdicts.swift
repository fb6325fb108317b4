import Foundation
import ScrollOffCore

/// The verdict of each `scrolloff doctor` check from the facts gathered (SPEC §11): pure, so every
/// PASS and FAIL, and the fix each FAIL prints, is tested without a helper or a network.
///
/// Words: what was found with its numbers, and for a FAIL one line saying exactly what to run.
/// Never blame: a FAIL is a step left to do, not a mistake.
public enum DoctorVerdicts {
    /// SPEC §11: a blocked name must be answered within 500 ms.
    public static let blockedProbeLimitMilliseconds = 500
    /// Firefox's canary (SPEC §9): NXDOMAIN keeps its own DNS over HTTPS off.
    public static let canaryName = "use-application-dns.net"
    public static let startHelper = "Start the helper: `sudo systemctl start scrolloff-dns` (or `make run` from the source tree)."
    static let restartHelper = "Restart the helper: `sudo systemctl restart scrolloff-dns`, and if it stays wrong read `journalctl -u scrolloff-dns -n 50`."

    // MARK: 1. helper

    public static func helper(reached facts: DoctorFacts, socket: String) -> DoctorCheck {
        .pass("helper", "scrolloff-dns \(facts.version) (pid \(facts.pid)) answers on \(socket)")
    }

    public static func helper(unreachable error: ControlClientError, socket: String) -> DoctorCheck {
        switch error {
        case .helperUnreachable(_, .socketMissing):
            return .fail("helper", "no helper socket at \(socket): the helper is not running, or uses another socket",
                         fix: startHelper + " If it runs with another socket, pass --socket PATH.")
        case .helperUnreachable(_, .nobodyListening):
            return .fail("helper", "nothing answers on \(socket): the helper seems to have stopped", fix: startHelper)
        case .permissionDenied:
            return .fail("helper", "this account may not use \(socket); members of group 'scrolloff' may",
                         fix: "`sudo usermod -aG scrolloff $USER`, then log out and in again.")
        case .timedOut(_, let seconds):
            return .fail("helper", "the helper at \(socket) did not answer within \(Int(seconds.rounded())) s", fix: restartHelper)
        case .refused(let status, let refusal) where status == 403:
            return .fail("helper", "the helper at \(socket) answered: \(refusal.message)",
                         fix: "Check a profile you may use: `scrolloff profile list`, then `scrolloff doctor --profile NAME`.")
        case .badAnswer, .refused:
            return .fail("helper", "the helper at \(socket) answered, but not in a way this CLI reads: \(error.description)",
                         fix: "Run the CLI and the helper from the same build, then `sudo systemctl restart scrolloff-dns`.")
        case .socketPathInvalid, .io:
            return .fail("helper", error.description, fix: "Pass the helper's socket with --socket PATH (default /run/scrolloff/control.sock).")
        }
    }

    /// A check that needs the helper's facts while the helper did not answer.
    public static func needsHelper(_ name: String) -> DoctorCheck {
        .fail(name, "not checked: needs the helper, which did not answer", fix: "Start the helper first (the helper check says how), then run `scrolloff doctor` again.")
    }

    /// A probe check while the helper has no UDP listener to probe.
    public static func noListener(_ name: String) -> DoctorCheck {
        .fail(name, "not checked: the sinkhole has no UDP listener to ask",
              fix: "Read why it could not listen: `journalctl -u scrolloff-dns -n 50` (another DNS server on port 53?).")
    }

    // MARK: 2. listeners

    /// - Parameter results: every bound listener with what a probe of it got.
    public static func listeners(_ results: [(DoctorListener, ProbeResult)]) -> DoctorCheck {
        guard !results.isEmpty else {
            return .fail("listeners", "the helper has no DNS listener up",
                         fix: "Read why it could not listen: `journalctl -u scrolloff-dns -n 50` (another DNS server on port 53?).")
        }
        var silent: [String] = []
        var answered: [String] = []
        for (listener, result) in results {
            switch result {
            case .answered(let answer): answered.append("\(listener) (\(answer.milliseconds) ms)")
            case .failed(let reason): silent.append("\(listener): \(reason)")
            }
        }
        guard silent.isEmpty else {
            return .fail("listeners", "\(silent.count) of \(results.count) listeners did not answer a query: "
                         + silent.joined(separator: "; "), fix: restartHelper)
        }
        return .pass("listeners", "\(results.count) \(results.count == 1 ? "listener answers" : "listeners answer"): "
                     + answered.joined(separator: ", "))
    }

    // MARK: 3. resolver

    /// How the system resolver was found configured.
    public struct ResolverObservation: Sendable, Equatable {
        public var resolvConfPath: String
        /// The file's text; nil when it could not be read (glibc then asks 127.0.0.1).
        public var resolvConf: String?
        /// systemd-resolved's servers, read only when resolv.conf names its stub: where they were
        /// read (a path or `resolvectl dns`), and nil servers when they could not be read.
        public var resolvedSource: String?
        public var resolvedServers: [NameServer]?

        public init(resolvConfPath: String, resolvConf: String?, resolvedSource: String? = nil, resolvedServers: [NameServer]? = nil) {
            self.resolvConfPath = resolvConfPath
            self.resolvConf = resolvConf
            self.resolvedSource = resolvedSource
            self.resolvedServers = resolvedServers
        }

        /// The servers of resolv.conf as glibc reads them; with none, glibc asks 127.0.0.1:53.
        public var resolvConfServers: [NameServer] {
            let named = resolvConf.map { ResolverSetup.nameServers(resolvConf: $0) } ?? []
            return named.isEmpty ? [NameServer(host: "127.0.0.1")] : named
        }

        /// Whether resolv.conf hands queries to systemd-resolved's stub.
        public var namesResolvedStub: Bool { resolvConfServers.contains { ResolverSetup.resolvedStubs.contains($0.host) } }
    }

    public static func resolver(_ seen: ResolverObservation, listeners: [DoctorListener], localAddresses: Set<String>) -> DoctorCheck {
        let path = seen.resolvConfPath
        let viaResolved = seen.namesResolvedStub
        var asked: [NameServer] = []
        for server in seen.resolvConfServers {
            if ResolverSetup.resolvedStubs.contains(server.host) {
                guard let servers = seen.resolvedServers else {
                    return .fail("resolver", "\(path) hands queries to systemd-resolved (\(server.host)), whose servers could not be read from \(seen.resolvedSource ?? "/run/systemd/resolve/resolv.conf")",
                                 fix: "Show them with `resolvectl dns`, and make the sinkhole the only one (see the README's resolver steps).")
                }
                asked += servers.filter { !asked.contains($0) }
            } else if !asked.contains(server) {
                asked.append(server)
            }
        }
        let route = viaResolved ? "\(path) → systemd-resolved" : path
        guard !asked.isEmpty else {
            return .fail("resolver", "\(route) has no DNS server at all", fix: resolverFix(viaResolved: viaResolved, listeners: listeners))
        }
        let matches = asked.map { ($0, ResolverSetup.match($0, listeners: listeners, localAddresses: localAddresses)) }
        let listed = asked.map(\.description).joined(separator: ", ")
        let sinkholeCount = matches.count { $0.1 == .sinkhole }
        if sinkholeCount == matches.count {
            return .pass("resolver", "\(route) → \(listed): the sinkhole")
        }
        if let (server, match) = matches.first(where: { if case .otherPort = $0.1 { true } else { false } }),
           case .otherPort(let port) = match {
            let listening = NameServer(host: server.host, port: port)
            let fix = viaResolved
                ? "Name the port in /etc/systemd/resolved.conf: `DNS=\(listening.host.contains(":") ? "[\(listening.host)]" : listening.host):\(port)`, then `sudo systemctl restart systemd-resolved`."
                : "resolv.conf cannot name a port: let the helper listen on port 53 (`--listen \(server.host.contains(":") ? "[\(server.host)]" : server.host):53`, or `listen` in /etc/scrolloff/scrolloff.toml), then restart it."
            return .fail("resolver", "\(route) asks \(server.host) on port \(server.port), but the sinkhole listens there on port \(port)", fix: fix)
        }
        let others = matches.filter { $0.1 != .sinkhole }.map { $0.0.description }.joined(separator: ", ")
        let detail = sinkholeCount == 0
            ? "\(route) → \(listed), not the sinkhole (\(sinkholeAddresses(listeners)))"
            : "\(route) also asks \(others), which \(others.contains(",") ? "answer" : "answers") without the sinkhole"
        return .fail("resolver", detail, fix: resolverFix(viaResolved: viaResolved, listeners: listeners))
    }

    static func sinkholeAddresses(_ listeners: [DoctorListener]) -> String {
        let udp = listeners.filter { $0.transport == DoctorListener.udp }.map(\.address)
        return udp.isEmpty ? "no listener" : udp.joined(separator: ", ")
    }

    static func resolverFix(viaResolved: Bool, listeners: [DoctorListener]) -> String {
        guard let address = ResolverSetup.suggestedAddress(listeners: listeners) else {
            return "The sinkhole listens on no port 53, which resolv.conf needs: start it with `--listen 127.0.0.1:53` (or `listen` in /etc/scrolloff/scrolloff.toml)."
        }
        if viaResolved {
            return "Set `DNS=\(address)` and `Domains=~.` under [Resolve] in /etc/systemd/resolved.conf, then `sudo systemctl restart systemd-resolved` (NetworkManager: see the README's resolver steps)."
        }
        return "Make it the only nameserver: `echo 'nameserver \(address)' | sudo tee /etc/resolv.conf` (if NetworkManager rewrites the file, see the README's resolver steps)."
    }

    // MARK: 4. blocked probe

    public static func blockedProbe(_ probe: DoctorProbeFacts, _ result: ProbeResult, profile: String) -> DoctorCheck {
        let target = NameServer(host: probe.host, port: probe.port).description
        let what = probe.blockedEntry.map { "\(probe.blockedName) (blocked by \($0))" }
            ?? "\(probe.blockedName) (the reserved probe name: nothing is blocked for profile \(profile) now)"
        let expected = expectedBlockedAnswer(mode: probe.blockingMode)
        switch result {
        case .failed(let reason):
            return .fail("blocked_probe", "\(what) got no answer from \(target): \(reason)", fix: restartHelper)
        case .answered(let answer):
            guard isBlockedAnswer(answer, mode: probe.blockingMode) else {
                return .fail("blocked_probe", "\(what) was answered \(answer.summary) by \(target), not \(expected)",
                             fix: "See the rules in force with `scrolloff status`; if it shows the entry blocked, restart the helper: `sudo systemctl restart scrolloff-dns`.")
            }
            guard answer.milliseconds < blockedProbeLimitMilliseconds else {
                return .fail("blocked_probe", "\(what) → \(answer.summary) in \(answer.milliseconds) ms, over the \(blockedProbeLimitMilliseconds) ms a blocked name may take",
                             fix: "Look for what keeps the machine or the helper busy: `top`, and `journalctl -u scrolloff-dns -n 50`.")
            }
            return .pass("blocked_probe", "\(what) → \(answer.summary) in \(answer.milliseconds) ms")
        }
    }

    /// SPEC §9's answer to a blocked A query in each blocking mode.
    static func expectedBlockedAnswer(mode: String) -> String {
        switch mode {
        case "nxdomain": "NXDOMAIN"
        case "refused": "REFUSED"
        default: "NOERROR 0.0.0.0"
        }
    }

    static func isBlockedAnswer(_ answer: ProbeAnswer, mode: String) -> Bool {
        switch mode {
        case "nxdomain": answer.rcode == "NXDOMAIN"
        case "refused": answer.rcode == "REFUSED"
        default: answer.rcode == "NOERROR" && !answer.addresses.isEmpty && answer.addresses.allSatisfy { $0 == "0.0.0.0" }
        }
    }

    // MARK: 5. normal probe

    public static func normalProbe(name: String, target: NameServer, _ result: ProbeResult) -> DoctorCheck {
        let upstreamFix = "Check the upstream resolvers the helper forwards to (`--upstream ADDR`, or `upstreams` in /etc/scrolloff/scrolloff.toml) and that this machine is online."
        let otherName = "Probe a name that resolves from here: `scrolloff doctor --probe-name NAME`."
        switch result {
        case .failed(let reason):
            return .fail("normal_probe", "\(name) got no answer from \(target): \(reason)", fix: upstreamFix)
        case .answered(let answer):
            switch answer.rcode {
            case "NOERROR":
                if answer.addresses.isEmpty {
                    return .fail("normal_probe", "\(name) resolves to no address (\(answer.answerCount) records)", fix: otherName)
                }
                if answer.addresses.allSatisfy({ $0 == "0.0.0.0" || $0 == "::" }) {
                    return .fail("normal_probe", "\(name) is blocked by a rule or list (→ \(answer.summary))", fix: otherName)
                }
                return .pass("normal_probe", "\(name) → \(answer.addresses.prefix(2).joined(separator: ", ")) in \(answer.milliseconds) ms")
            case "NXDOMAIN":
                return .fail("normal_probe", "\(name) does not exist upstream (NXDOMAIN)", fix: otherName)
            default:
                return .fail("normal_probe", "\(name) → \(answer.rcode) instead of an address: the upstream resolvers did not resolve it", fix: upstreamFix)
            }
        }
    }

    // MARK: 6. lists

    /// One check per downloaded list: refreshed within twice its period (`RefreshPlan.isStale`).
    public static func lists(_ lists: [DoctorListFacts], now: Date) -> [DoctorCheck] {
        guard !lists.isEmpty else { return [.pass("lists", "no downloaded lists to keep fresh")] }
        return lists.map { list in
            let name = "list:\(list.name)"
            let fix = "`scrolloff lists update \(list.name)`"
            let every = SpanWords.describe(seconds: list.periodSeconds)
            let why = list.lastError.map { " (last try: \($0))" } ?? ""
            guard let last = list.lastSuccess else {
                return .fail(name, "\(list.name) was never downloaded\(why)", fix: fix)
            }
            let age = Int64(now.timeIntervalSince(last).rounded(.down))
            let ago = age < 60 ? "just now" : SpanWords.describe(seconds: age) + " ago"
            guard age <= list.periodSeconds * 2 else {
                return .fail(name, "\(list.name) was last refreshed \(ago), more than twice its period of \(every)\(why)", fix: fix)
            }
            return .pass(name, "\(list.name) refreshed \(ago) (every \(every))")
        }
    }

    // MARK: 7. canary

    /// - Parameters:
    ///   - server: the first server of the system resolver, which browsers ask.
    ///   - helperAnswers: false when the helper did not answer: a silent resolver is then most
    ///     likely the stopped sinkhole itself, and starting it is the fix.
    public static func canary(through server: NameServer, _ result: ProbeResult, helperAnswers: Bool = true) -> DoctorCheck {
        let point = "Point the system resolver at the sinkhole (see the resolver check); Firefox's Settings → Privacy & Security → DNS over HTTPS → Off also keeps it off."
        switch result {
        case .failed(let reason):
            return .fail("canary", "\(canaryName) got no answer through \(server) (the system resolver): \(reason)",
                         fix: helperAnswers ? point : startHelper)
        case .answered(let answer) where answer.rcode == "NXDOMAIN":
            return .pass("canary", "\(canaryName) → NXDOMAIN through \(server): browsers keep their own DNS over HTTPS off")
        case .answered(let answer):
            return .fail("canary", "\(canaryName) → \(answer.summary) through \(server): Firefox may turn on its own DNS over HTTPS and pass the sinkhole by", fix: point)
        }
    }

    // MARK: 8. clock

    /// SPEC §11. A FAIL while the clocks disagree now (or the system clock was never set); a
    /// tamper event that is over is reported in the detail, since nothing is left to fix.
    public static func clock(_ clock: DoctorClockFacts) -> DoctorCheck {
        let ntp = "Let NTP keep the system clock right: `sudo timedatectl set-ntp true`. Until then every rule keeps the trusted clock."
        if clock.basis == DoctorClockFacts.awaitingWallClock {
            return .fail("clock", "the system clock reads \(ControlJSON.wireText(clock.wall)), before this build was made; rules keep the trusted clock (\(ControlJSON.wireText(clock.trusted))) until it is set", fix: ntp)
        }
        let offset = clock.offsetSeconds
        if abs(offset) > clock.thresholdSeconds {
            let side = offset > 0 ? "ahead of" : "behind"
            return .fail("clock", "the system clock is \(SpanWords.describe(seconds: abs(offset))) \(side) the trusted clock (more than \(SpanWords.describe(seconds: clock.thresholdSeconds)))", fix: ntp)
        }
        var detail = "the system clock agrees with the trusted clock (\(abs(offset)) s apart)"
        if let latest = clock.recentTamper.last {
            let window = SpanWords.describe(seconds: clock.tamperWindowSeconds)
            detail += "; \(clock.recentTamper.count) clock \(clock.recentTamper.count == 1 ? "change" : "changes") caught in the last \(window), latest at \(ControlJSON.wireText(latest.time)): \(latest.message)"
        }
        return .pass("clock", detail)
    }

    // MARK: 9. database

    public static func database(_ database: DoctorDatabaseFacts) -> DoctorCheck {
        guard !database.problems.isEmpty else { return .pass("database", "PRAGMA quick_check: ok (\(database.path))") }
        let path = database.path
        return .fail("database", "PRAGMA quick_check of \(path) found: \(database.problems.prefix(3).joined(separator: "; "))",
                     fix: "Stop the helper and recover a copy: `sudo systemctl stop scrolloff-dns && sudo sqlite3 \(path) .recover | sudo sqlite3 \(path).recovered`, then move it in place and start the helper.")
    }
}
