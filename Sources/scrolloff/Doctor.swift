import ArgumentParser
import ControlAPI
import ControlTransport
import DNSWire
import DoctorChecks

/// Whether blocking works end to end, checked from this machine.
enum DoctorVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Doctor.self] }
}

/// `scrolloff doctor` (SPEC §11, §13): PASS or FAIL for every link between a device and a blocked
/// name, each FAIL with one line saying what to do. Exit 0 when all pass, 1 when any fails (also
/// when the helper cannot be reached: that is a finding, not an error), 2 for a usage error.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that blocking works end to end, with a one-line fix for anything that does not.",
        discussion: """
            Checks: the helper answers; its DNS listeners answer; the system resolver points at it; a \
            blocked name is answered as blocked within 500 ms; a normal name resolves; downloaded lists \
            are fresh; the DoH canary answers NXDOMAIN; the clock is trusted; the database is intact.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .customLong("probe-name"), help: ArgumentHelp("A name that should resolve normally.", valueName: "NAME"))
    var probeName = "example.com"

    @Option(name: .customLong("resolv-conf"), help: .hidden)
    var resolvConf = "/etc/resolv.conf"

    @Option(name: .customLong("resolved-conf"), help: .hidden)
    var resolvedConf: String?

    @Option(name: .customLong("nsswitch-conf"), help: .hidden)
    var nsswitchConf = "/etc/nsswitch.conf"

    @Option(name: .customLong("resolvectl"), help: .hidden)
    var resolvectl: String?

    func validate() throws {
        guard !probeName.isEmpty, (try? DNSName(probeName)) != nil else {
            throw ValidationError("--probe-name needs a DNS name such as example.com.")
        }
    }

    func run() throws {
        let socket = options.socketPath
        let client = options.client(timeoutSeconds: 10)
        let facts: DoctorFacts?
        let unreachable: ControlClientError?
        do {
            facts = try client.call(ControlEndpoints.doctor)
            unreachable = nil
        } catch {
            // An unknown profile or a malformed request is the caller's usage error (exit 2, SPEC §13).
            if error.exitCode == CLIExit.usage {
                options.report(error)
                throw ExitCode(CLIExit.usage)
            }
            facts = nil
            unreachable = error
        }
        let sources = DoctorSystem.Sources(resolvConf: resolvConf, nsswitchConf: nsswitchConf, resolvedConf: resolvedConf, resolvectl: resolvectl)
        // resolved's servers also matter when the helper forwards to its stub: a loop if they lead back.
        let forwardsToStub = facts?.upstreams.contains { ResolverSetup.resolvedStubs.contains($0.host) } ?? false
        let seen = DoctorSystem.observeResolver(sources, alsoResolved: forwardsToStub)
        var checks: [DoctorCheck]
        if let facts {
            checks = DoctorRun.checks(facts: facts, socket: socket, resolver: seen, probeName: probeName)
        } else {
            checks = [DoctorVerdicts.helper(unreachable: unreachable ?? .helperUnreachable(path: socket, reason: .socketMissing), socket: socket)]
            checks += ["listeners", "resolver", "blocked_probe", "normal_probe", "lists"].map(DoctorVerdicts.needsHelper)
            // The canary needs no helper: it asks whatever the system resolver is, as a browser would.
            checks.append(DoctorRun.canary(resolver: seen, helperAnswers: false))
            checks += ["clock", "database"].map(DoctorVerdicts.needsHelper)
        }
        let report = DoctorReport(checks: checks)
        if options.json {
            Terminal.printJSON(report)
        } else {
            DoctorWords.print(report)
        }
        if !report.ok { throw ExitCode(CLIExit.refused) }
    }
}

/// Runs the checks that need the helper's facts, in the order a query travels.
enum DoctorRun {
    static func checks(facts: DoctorFacts, socket: String, resolver seen: DoctorVerdicts.ResolverObservation, probeName: String) -> [DoctorCheck] {
        var checks = [DoctorVerdicts.helper(reached: facts, socket: socket)]
        // `--mode hosts`: no DNS listener on purpose, and the system resolver stays as it is; the
        // hosts-file section is what blocks, so the DNS-path checks would only mislead.
        if let hosts = facts.hosts, !hosts.dnsToo {
            checks.append(DoctorVerdicts.hosts(hosts, now: facts.now))
            if let strict = DoctorVerdicts.hostsStrictCurfew(hosts) { checks.append(strict) }
            checks += DoctorVerdicts.lists(facts.lists, now: facts.now)
            checks.append(DoctorVerdicts.clock(facts.clock))
            checks.append(DoctorVerdicts.database(facts.database, now: facts.now))
            return checks
        }
        if let hosts = facts.hosts { checks.append(DoctorVerdicts.hosts(hosts, now: facts.now)) }
        if let firewall = facts.firewall { checks.append(DoctorVerdicts.firewall(firewall)) }
        // The listeners are asked the reserved name: answered by the sinkhole itself, never forwarded.
        let reservedName = facts.probe?.reservedName ?? "doctor-probe.scrolloff.invalid"
        let listenerResults = facts.listeners.map { listener -> (DoctorListener, ProbeResult) in
            let host = listener.host == "0.0.0.0" ? "127.0.0.1" : listener.host == "::" ? "::1" : listener.host
            return (listener, DNSProbe.ask(reservedName, host: host, port: listener.port,
                                           over: listener.transport == DoctorListener.tcp ? .tcp : .udp))
        }
        checks.append(DoctorVerdicts.listeners(listenerResults))
        let local = DoctorSystem.localAddresses()
        checks.append(DoctorVerdicts.resolver(seen, listeners: facts.listeners, localAddresses: local))
        if let probe = facts.probe {
            let blocked = DNSProbe.ask(probe.blockedName, host: probe.host, port: probe.port)
            checks.append(DoctorVerdicts.blockedProbe(probe, blocked, profile: facts.profile))
            if let loop = DoctorVerdicts.forwardingLoop(upstreams: facts.upstreams, listeners: facts.listeners, localAddresses: local,
                                                        resolvedServers: seen.resolvedServers) {
                checks.append(DoctorVerdicts.normalProbe(name: probeName, loop: loop))
            } else {
                // Upstream answers may take the forwarder's whole budget; allow a little more.
                let normal = DNSProbe.ask(probeName, host: probe.host, port: probe.port, timeout: 5)
                checks.append(DoctorVerdicts.normalProbe(
                    name: probeName, target: NameServer(host: probe.host, port: probe.port), normal, upstreams: facts.upstreams))
            }
        } else {
            checks += ["blocked_probe", "normal_probe"].map(DoctorVerdicts.noListener)
        }
        if let upstreams = DoctorVerdicts.upstreams(facts.upstreamHealth) { checks.append(upstreams) }
        checks += DoctorVerdicts.lists(facts.lists, now: facts.now)
        checks.append(canary(resolver: seen))
        checks.append(DoctorVerdicts.clock(facts.clock))
        checks.append(DoctorVerdicts.database(facts.database, now: facts.now))
        return checks
    }

    /// Asks the canary of the first server the system resolver uses, the one a browser's lookup reaches.
    static func canary(resolver seen: DoctorVerdicts.ResolverObservation, helperAnswers: Bool = true) -> DoctorCheck {
        let server = seen.firstServer
        let result = DNSProbe.ask(DoctorVerdicts.canaryName, host: server.host, port: server.port)
        return DoctorVerdicts.canary(through: server, result, helperAnswers: helperAnswers)
    }
}

/// The human form: one line per check, the fix under each FAIL or WARN, and a closing sentence.
enum DoctorWords {
    static func print(_ report: DoctorReport) {
        let width = max(13, report.checks.map(\.name.count).max() ?? 0)
        for check in report.checks {
            let padded = check.name.padding(toLength: width, withPad: " ", startingAt: 0)
            let status = switch check.status {
            case .pass: Terminal.green("PASS")
            case .warn: Terminal.yellow("WARN")
            case .fail: Terminal.yellow("FAIL")
            }
            Swift.print("\(status)  \(padded)  \(check.detail)")
            if let fix = check.fix {
                Swift.print(String(repeating: " ", count: width + 8) + "fix: " + fix)
            }
        }
        let passed = report.checks.count { $0.status != .fail }
        let warned = report.checks.count { $0.status == .warn }
        if report.ok, warned > 0 {
            Swift.print("No check fails; \(warned) \(warned == 1 ? "warning says" : "warnings say") what this setup cannot block.")
        } else if report.ok {
            Swift.print("All \(passed) checks pass: the sinkhole answers, and blocks what you asked it to.")
        } else {
            Swift.print("\(passed) of \(report.checks.count) checks pass. Each fix above is one step; run `scrolloff doctor` again after it.")
        }
    }
}
