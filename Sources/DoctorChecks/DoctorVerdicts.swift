import ControlAPI
import ControlTransport
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
        case .untrustedServer(_, let uid):
            return .fail("helper", "\(socket) is served by \(uid.map { ControlClientError.userName($0) } ?? "an unknown user"), not by root or you: not the helper, and nothing was sent to it",
                         fix: "Remove that socket and restart the helper: `sudo rm \(socket) && sudo systemctl restart scrolloff-dns`.")
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

    /// - Parameter upstreams: the helper's; through systemd-resolved's stub a failure is most
    ///   likely resolved sending the name back (resolved's servers could not be read to be sure).
    public static func normalProbe(name: String, target: NameServer, _ result: ProbeResult, upstreams: [NameServer] = []) -> DoctorCheck {
        let viaStub = upstreams.contains { ResolverSetup.resolvedStubs.contains($0.host) }
        let upstreamFix = viaStub
            ? "The helper forwards to systemd-resolved's stub, which sends names back if it points at the sinkhole: a " + forwardingLoopFix
            : "Check the upstream resolvers the helper forwards to (`--upstream ADDR`, or `upstreams` in /etc/scrolloff/scrolloff.toml) and that this machine is online."
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
}
