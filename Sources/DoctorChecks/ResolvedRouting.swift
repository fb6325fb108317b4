import ControlAPI

/// One DNS scope of systemd-resolved: the global one or a link's, with its servers, its domains
/// and whether it is a default route, as `resolvectl dns`, `resolvectl domain` and
/// `resolvectl default-route` print them.
public struct ResolvedScope: Sendable, Equatable {
    /// `Global` or `Link 2 (eth0)`.
    public var name: String
    public var servers: [NameServer]
    /// Search and routing domains; `~` marks a routing-only one, `~.` routes every name here.
    public var domains: [String]
    /// The link's default-route setting in effect; nil when unknown (and for the global scope).
    public var defaultRoute: Bool?

    public init(name: String, servers: [NameServer], domains: [String] = [], defaultRoute: Bool? = nil) {
        self.name = name
        self.servers = servers
        self.domains = domains
        self.defaultRoute = defaultRoute
    }

    public var isGlobal: Bool { name == "Global" }

    /// `~.` (or a plain `.`): the root domain, which every name ends in.
    public var routesEveryName: Bool { domains.contains("~.") || domains.contains(".") }

    /// Whether names matching no routing domain go here (systemd.network(5), `DNSDefaultRoute=`:
    /// by default a link is one unless it has a routing-only domain; the global scope always is).
    public var isDefaultRoute: Bool {
        if isGlobal { return true }
        return defaultRoute ?? !domains.contains { $0.hasPrefix("~") }
    }
}

/// Where systemd-resolved sends an ordinary name (one under no link's own domain), and which of its
/// servers never see one.
public struct ResolvedRouting: Sendable, Equatable {
    public var asked: [NameServer]
    /// Servers only asked for their links' own domains (`lan`, `corp.example`): they pass no
    /// ordinary name by the sinkhole.
    public var ignored: [NameServer]

    /// The link each asked server belongs to (`Link 5 (tun0)`); global servers are not named.
    public var links: [NameServer: String]

    public init(asked: [NameServer], ignored: [NameServer] = [], links: [NameServer: String] = [:]) {
        self.asked = asked
        self.ignored = ignored
        self.links = links
    }
}

extension ResolverSetup {
    /// The scopes of `resolvectl dns` output, with the domains of `resolvectl domain` and the
    /// settings of `resolvectl default-route` when given (each is `Global: …` / `Link N (name): …`).
    /// - Returns: every scope of `dns`, in order; domains stay empty when `domains` is nil.
    public static func resolvedScopes(dns: String, domains: String?, defaultRoute: String?) -> [ResolvedScope] {
        let domainLines = domains.map(scopeLines) ?? []
        let routeLines = defaultRoute.map(scopeLines) ?? []
        return scopeLines(dns).map { name, values in
            ResolvedScope(
                name: name, servers: uniqueServers(values.compactMap(parseSystemdServer)),
                domains: domainLines.first { $0.name == name }?.values ?? [],
                defaultRoute: routeLines.first { $0.name == name }.flatMap { $0.values.first.flatMap(parseYesNo) })
        }
    }

    /// systemd-resolved's routing of an ordinary name (systemd-resolved.service(8), "Protocols and
    /// Routing"): a name goes to the scopes whose routing domain matches it longest. `~.` matches
    /// every name, so when any scope with servers has it, only those scopes are asked and the
    /// other links get only names under their own domains. Without `~.` anywhere, a name matching
    /// no domain goes to the global servers and those of every default-route link.
    /// - Parameter domainsKnown: false when the domains could not be read: every server then counts.
    public static func ordinaryNameRouting(_ scopes: [ResolvedScope], domainsKnown: Bool = true) -> ResolvedRouting {
        let withServers = scopes.filter { !$0.servers.isEmpty }
        guard domainsKnown else { return ResolvedRouting(asked: uniqueServers(withServers.flatMap(\.servers))) }
        let everyName = withServers.filter(\.routesEveryName)
        let chosen = everyName.isEmpty ? withServers.filter(\.isDefaultRoute) : everyName
        let asked = uniqueServers(chosen.flatMap(\.servers))
        let ignored = uniqueServers(withServers.flatMap(\.servers)).filter { !asked.contains($0) }
        var links: [NameServer: String] = [:]
        // A server also in the global scope is the global one: the link then changes nothing.
        let global = Set(chosen.filter(\.isGlobal).flatMap(\.servers))
        for scope in chosen where !scope.isGlobal {
            for server in scope.servers where !global.contains(server) && links[server] == nil { links[server] = scope.name }
        }
        return ResolvedRouting(asked: asked, ignored: ignored, links: links)
    }

    /// `Global: a b` → ("Global", ["a", "b"]); `Link 2 (eth0): a` → ("Link 2 (eth0)", ["a"]).
    static func scopeLines(_ text: String) -> [(name: String, values: [String])] {
        var scopes: [(name: String, values: [String])] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let name: Substring
            let rest: Substring
            if line.hasPrefix("Global:") {
                name = "Global"
                rest = line.dropFirst("Global:".count)
            } else if line.hasPrefix("Link "), let close = line.firstIndex(of: ")"),
                      line[line.index(after: close)...].hasPrefix(":") {
                name = line[...close]
                rest = line[line.index(close, offsetBy: 2)...]
            } else {
                continue
            }
            scopes.append((String(name), rest.split(separator: " ").map(String.init)))
        }
        return scopes
    }

    static func parseYesNo(_ text: String) -> Bool? {
        switch text {
        case "yes": true
        case "no": false
        default: nil
        }
    }

    static func uniqueServers(_ servers: [NameServer]) -> [NameServer] {
        var unique: [NameServer] = []
        for server in servers where !unique.contains(server) { unique.append(server) }
        return unique
    }

    /// How glibc's `hosts:` line in nsswitch.conf (nsswitch.conf(5)) reaches DNS: `resolve`
    /// (nss-resolve) asks systemd-resolved directly and never reads resolv.conf; `dns` reads
    /// resolv.conf. After `resolve [!UNAVAIL=return]`, `dns` is asked only while resolved is
    /// not running; without that action, also for names resolved did not find.
    public struct HostsLookup: Sendable, Equatable {
        /// `resolve` comes before `dns` (or there is no `dns`).
        public var asksResolved: Bool
        /// resolv.conf is still asked for names resolved answered "not found".
        public var thenResolvConf: Bool

        public init(asksResolved: Bool, thenResolvConf: Bool) {
            self.asksResolved = asksResolved
            self.thenResolvConf = thenResolvConf
        }

        /// glibc's own default with no nsswitch.conf, or no `hosts:` line: `dns [!UNAVAIL=return] files`.
        public static let resolvConfOnly = HostsLookup(asksResolved: false, thenResolvConf: true)
    }

    public static func hostsLookup(nsswitch text: String) -> HostsLookup {
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard content.hasPrefix("hosts"), let colon = content.firstIndex(of: ":"),
                  content[content.index(content.startIndex, offsetBy: 5)..<colon].allSatisfy({ $0 == " " || $0 == "\t" })
            else { continue }
            // Services and their `[STATUS=action]` groups, which may hold spaces inside brackets.
            var services: [(name: String, actions: String)] = []
            var inAction = false
            for text in content[content.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                if inAction || text.hasPrefix("[") {
                    if !services.isEmpty { services[services.count - 1].actions += text.lowercased() }
                    inAction = !text.hasSuffix("]")
                    continue
                }
                services.append((String(text), ""))
            }
            let names = services.map(\.name)
            guard let resolve = names.firstIndex(of: "resolve") else { return .resolvConfOnly }
            guard let dns = names.firstIndex(of: "dns") else { return HostsLookup(asksResolved: true, thenResolvConf: false) }
            guard resolve < dns else { return .resolvConfOnly }
            // `[!UNAVAIL=return]` returns whatever resolved says while it runs.
            let actions = services[resolve].actions
            let returnsAlways = actions.contains("!unavail=return") || actions.contains("notfound=return")
            return HostsLookup(asksResolved: true, thenResolvConf: !returnsAlways)
        }
        return .resolvConfOnly
    }
}
