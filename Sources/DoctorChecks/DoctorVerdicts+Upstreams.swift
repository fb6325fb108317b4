import ControlAPI

/// Check 5's forwarding loop: the helper must forward to a resolver that does not lead back to it.
extension DoctorVerdicts {
    public static let forwardingLoopFix = "forwarding loop: set `[dns] upstreams = [...]` in /etc/scrolloff/scrolloff.toml to your router or a public resolver (such as \"192.168.1.1\" or \"9.9.9.9\"), then `sudo systemctl reload scrolloff-dns`."

    /// Why a query the helper forwards comes back to it, or nil when none does: an upstream that
    /// is one of the sinkhole's own listeners, or systemd-resolved's stub (127.0.0.53/54) while
    /// resolved sends ordinary names to the sinkhole. Each hop then forwards again until the
    /// forwarder's budget runs out, and every allowed name ends in SERVFAIL.
    /// - Parameter resolvedServers: resolved's servers for an ordinary name; nil when unknown.
    public static func forwardingLoop(
        upstreams: [NameServer], listeners: [DoctorListener], localAddresses: Set<String>, resolvedServers: [NameServer]?
    ) -> String? {
        for upstream in upstreams {
            if ResolverSetup.match(upstream, listeners: listeners, localAddresses: localAddresses) == .sinkhole {
                return "the helper forwards to \(upstream), which is the sinkhole itself"
            }
            guard ResolverSetup.resolvedStubs.contains(upstream.host), upstream.port == 53, let resolvedServers else { continue }
            if let back = resolvedServers.first(where: { ResolverSetup.match($0, listeners: listeners, localAddresses: localAddresses) == .sinkhole }) {
                return "the helper forwards to \(upstream) (systemd-resolved), which sends it back to the sinkhole at \(back)"
            }
        }
        return nil
    }

    /// The normal probe when a loop is known: not sent, since it would only circle until SERVFAIL.
    public static func normalProbe(name: String, loop: String) -> DoctorCheck {
        .fail("normal_probe", "\(name) not asked: \(loop), so every allowed name would fail (SERVFAIL)", fix: forwardingLoopFix)
    }
}

/// Check 5b: whether any upstream answers. The normal probe alone cannot tell: while every
/// upstream is down, cached names still resolve and expired ones are served stale (RFC 8767),
/// so a household sees "some sites work" until the stale answers run out.
extension DoctorVerdicts {
    public static func upstreams(_ health: [DoctorUpstreamHealth]) -> DoctorCheck? {
        guard !health.isEmpty else { return nil }
        let down = health.filter { !$0.up }
        if down.isEmpty {
            return .pass("upstreams", health.count == 1 ? "\(health[0].upstream) answers" : "all \(health.count) upstreams answer")
        }
        let list = down.map { "\($0.upstream) (\($0.consecutiveFailures) failures in a row)" }.joined(separator: ", ")
        let fix = "Check that the upstream resolvers are reachable from this machine (`dig @ADDR example.com`), or set other ones in `[dns] upstreams` in /etc/scrolloff/scrolloff.toml, then `sudo systemctl reload scrolloff-dns`."
        if down.count == health.count {
            return .fail(
                "upstreams",
                "every upstream is down: \(list); only cached names resolve, expired ones served stale with TTL 30 s",
                fix: fix)
        }
        return .pass("upstreams", "\(health.count - down.count) of \(health.count) upstreams answer; down: \(list)")
    }
}
