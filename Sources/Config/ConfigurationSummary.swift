import Enforcement
import Foundation
import PostgresStore
import ScrollOffCore
import Store

/// The few lines `check-config` prints for a good file: numbers first, what the helper will do.
public enum ConfigurationSummary {
    public static func lines(_ c: HelperConfiguration) -> [String] {
        var out: [String] = []
        switch c.enforcementMode {
        case .dns: break
        case .hosts: out.append("mode hosts: the default profile's blocks kept in \(c.hostsFile); no DNS listener (the lines below apply to --mode dns and both)")
        case .both: out.append("mode both: DNS answers, and the default profile's blocks kept in \(c.hostsFile)")
        }
        out.append("\(count(c.listen.count, "listen address", "listen addresses")): \(c.listen.map(\.description).joined(separator: ", "))")
        out.append(c.upstreams.isEmpty
            ? "0 upstreams: /etc/resolv.conf names none other than this server; set dns.upstreams"
            : "\(count(c.upstreams.count, "upstream", "upstreams")): \(c.upstreams.map(\.description).joined(separator: ", ")), "
                + "timeout \(c.forwarder.perUpstream.nanoseconds / 1_000_000) ms each")
        let doh = c.dohEndpointsPath == nil ? "encrypted-DNS hosts not blocked" : "encrypted-DNS hosts blocked"
        out.append("blocked names: \(c.blockingMode.rawValue) answers with a \(c.blockedTTL) s TTL; \(doh)")
        out.append("cache: \(c.cache.capacity) answers, TTL \(c.cache.minimumTTL)–\(c.cache.maximumTTL) s, "
            + "negative at most \(c.cache.maximumNegativeTTL) s, stale at most \(c.cache.maximumStaleAge) s past expiry")
        out.append(c.rateLimit.map { "rate limit: \($0.queriesPerSecond) queries/s per client, bursts of \($0.burst)" } ?? "rate limit: off")
        out.append("\(count(c.listSources.count, "list source", "list sources")) in the file (besides `scrolloff lists add`), refreshed every \(SpanWords.describe(c.listRefreshPeriod))")
        out.append("\(count(c.profiles.count + 1, "profile", "profiles")): " + ([c.defaultProfile] + c.profiles).map(profile).joined(separator: "; "))
        // In the engine's order (the default, then by name), which breaks a tie as the router does.
        let ordered = c.profiles.sorted { $0.name < $1.name }.map { (name: $0.name, clients: $0.clientCIDRs) }
        for line in ClientOverlaps.describe(ordered) { out.append("overlap: \(line)") }
        // SPEC §4a: the file's daily allowances in the words `allowance list` uses.
        for a in c.allowances {
            let words = Allowance(entries: a.entries.map { EntryID($0) }, secondsByWeekday: a.secondsByWeekday).words
            out.append("daily allowance of \(a.profile): \(words)")
        }
        out.append("metrics: " + (c.metricsListen.map { "http://\($0)/metrics" } ?? "off"))
        out.append("household page: " + (c.webListenAddresses.isEmpty ? "off" : c.webListenAddresses.map { "http://\($0)/" }.joined(separator: ", ")))
        out.append("state: \(c.paths.stateDirectory); control socket: \(c.paths.controlSocket); log level \(c.logLevel)")
        out.append(store(c))
        return out
    }

    /// Where the rules, wallets and ledger live: the SQLite file, or the household's PostgreSQL
    /// server, this helper's name there and where its password comes from (never the password).
    static func store(_ c: HelperConfiguration) -> String {
        switch c.store.backend {
        case .sqlite:
            return "store: sqlite \(c.paths.stateDirectory)/\(StateFiles.databaseName), this helper alone"
        case .postgresql:
            // The URL as the helper logs it: user, host or socket, database and TLS mode. A URL
            // holding a password never gets here (the file is refused).
            let server = (try? PostgresLocation(parsing: c.store.url))?.description ?? c.store.url
            let node = c.store.node.isEmpty ? "\(ProcessInfo.processInfo.hostName) (the host name)" : c.store.node
            let password = c.store.passwordFile.isEmpty ? "no password file" : "password read from \(c.store.passwordFile)"
            return "store: postgresql \(server), shared by the household's helpers; this helper is node \(node); \(password)"
        }
    }

    private static func profile(_ p: ProfileSettings) -> String {
        let clients = p.clientCIDRs.isEmpty ? "everyone else" : p.clientCIDRs.joined(separator: ", ")
        return "\(p.name) (\(p.preset), \(p.timeZoneID), \(clients))"
    }

    private static func count(_ n: Int, _ one: String, _ many: String) -> String { n == 1 ? "1 \(one)" : "\(n) \(many)" }
}
