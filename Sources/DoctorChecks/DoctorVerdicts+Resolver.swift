import ControlAPI

/// Check 3 of `scrolloff doctor`: the system resolver points at the sinkhole (SPEC §11).
extension DoctorVerdicts {
    // MARK: 3. resolver

    /// How the system resolver was found configured.
    public struct ResolverObservation: Sendable, Equatable {
        public var resolvConfPath: String
        /// The file's text; nil when it could not be read (glibc then asks 127.0.0.1).
        public var resolvConf: String?
        /// How nsswitch.conf's `hosts:` line reaches DNS: through nss-resolve straight to
        /// systemd-resolved (resolv.conf unread), or through resolv.conf.
        public var hostsLookup: ResolverSetup.HostsLookup
        public var nsswitchPath: String
        /// systemd-resolved's servers for an ordinary name, read when resolv.conf names its stub,
        /// nsswitch.conf asks it, or the helper forwards to it: where they were read (a path or
        /// `resolvectl`), and nil servers when they could not be read.
        public var resolvedSource: String?
        public var resolvedServers: [NameServer]?
        /// resolved's servers that only get their links' own domains (a `~.` scope takes the rest).
        public var resolvedIgnored: [NameServer]
        /// The link each of `resolvedServers` comes from, when not the global scope.
        public var resolvedLinks: [NameServer: String]

        public init(
            resolvConfPath: String, resolvConf: String?, hostsLookup: ResolverSetup.HostsLookup = .resolvConfOnly,
            nsswitchPath: String = "/etc/nsswitch.conf", resolvedSource: String? = nil, resolvedServers: [NameServer]? = nil,
            resolvedIgnored: [NameServer] = [], resolvedLinks: [NameServer: String] = [:]
        ) {
            self.resolvConfPath = resolvConfPath
            self.resolvConf = resolvConf
            self.hostsLookup = hostsLookup
            self.nsswitchPath = nsswitchPath
            self.resolvedSource = resolvedSource
            self.resolvedServers = resolvedServers
            self.resolvedIgnored = resolvedIgnored
            self.resolvedLinks = resolvedLinks
        }

        /// The servers of resolv.conf as glibc reads them; with none, glibc asks 127.0.0.1:53.
        public var resolvConfServers: [NameServer] {
            let named = resolvConf.map { ResolverSetup.nameServers(resolvConf: $0) } ?? []
            return named.isEmpty ? [NameServer(host: "127.0.0.1")] : named
        }

        /// Whether resolv.conf hands queries to systemd-resolved's stub.
        public var namesResolvedStub: Bool { resolvConfServers.contains { ResolverSetup.resolvedStubs.contains($0.host) } }

        /// Whether any lookup reaches systemd-resolved, by nss-resolve or by its stub.
        public var asksResolved: Bool { hostsLookup.asksResolved || namesResolvedStub }

        /// What glibc asks, in order: resolved (as its stub) when nss-resolve comes first, then
        /// resolv.conf's servers unless nss-resolve's answer is final.
        var entryServers: [NameServer] {
            guard hostsLookup.asksResolved else { return resolvConfServers }
            let viaNSS = NameServer(host: "127.0.0.53")
            return hostsLookup.thenResolvConf ? [viaNSS] + resolvConfServers.filter { $0 != viaNSS } : [viaNSS]
        }

        /// Where browsers' lookups go first: resolved's first server when nss-resolve asks it
        /// directly (its stub listener may be off), else resolv.conf's first server.
        public var firstServer: NameServer {
            if hostsLookup.asksResolved, let first = resolvedServers?.first { return first }
            return resolvConfServers.first ?? NameServer(host: "127.0.0.1")
        }
    }

    public static func resolver(_ seen: ResolverObservation, listeners: [DoctorListener], localAddresses: Set<String>) -> DoctorCheck {
        let viaNSS = seen.hostsLookup.asksResolved
        let path = viaNSS ? seen.nsswitchPath : seen.resolvConfPath
        let viaResolved = seen.asksResolved
        var asked: [NameServer] = []
        for server in seen.entryServers {
            if ResolverSetup.resolvedStubs.contains(server.host) {
                guard let servers = seen.resolvedServers else {
                    return .fail("resolver", "\(path) hands queries to systemd-resolved (\(viaNSS ? "nss-resolve" : server.host)), whose servers could not be read from \(seen.resolvedSource ?? "/run/systemd/resolve/resolv.conf")",
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
            // Servers of links without `~.` are named, so nobody wonders why they are not a FAIL.
            let ignored = seen.resolvedIgnored.isEmpty ? ""
                : " (\(seen.resolvedIgnored.map(\.description).joined(separator: ", ")) only for \(seen.resolvedIgnored.count == 1 ? "its link's" : "their links'") own domains)"
            return .pass("resolver", "\(route) → \(listed): the sinkhole" + ignored)
        }
        if let (server, match) = matches.first(where: { if case .otherPort = $0.1 { true } else { false } }),
           case .otherPort(let port) = match {
            let listening = NameServer(host: server.host, port: port)
            let fix = viaResolved
                ? "Name the port in /etc/systemd/resolved.conf: `DNS=\(listening.host.contains(":") ? "[\(listening.host)]" : listening.host):\(port)`, then `sudo systemctl restart systemd-resolved`."
                : "resolv.conf cannot name a port: let the helper listen on port 53 (`--listen \(server.host.contains(":") ? "[\(server.host)]" : server.host):53`, or `listen` in /etc/scrolloff/scrolloff.toml), then restart it."
            return .fail("resolver", "\(route) asks \(server.host) on port \(server.port), but the sinkhole listens there on port \(port)", fix: fix)
        }
        let otherServers = matches.filter { $0.1 != .sinkhole }.map(\.0)
        let otherLinks = otherServers.compactMap { seen.resolvedLinks[$0] }
        if sinkholeCount > 0, viaResolved, otherLinks.count == otherServers.count {
            // Each server passing the sinkhole by is a link's own: that link's setting is the fix, not resolved.conf.
            let named = Set(otherLinks).sorted().joined(separator: ", ")
            return .fail("resolver", "\(route) also asks \(otherServers.map(\.description).joined(separator: ", ")) of \(named), which \(otherLinks.count == 1 ? "takes" : "take") every name (`~.`) besides the sinkhole",
                         fix: "Give \(named) the sinkhole as DNS server too, or take `~.` off its DNS domains (`resolvectl domain` shows them; a VPN sets it in its connection's settings).")
        }
        let others = otherServers.map(\.description).joined(separator: ", ")
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
}
