import ControlServer
import Engine
import Firewall
import Foundation
import HouseholdPage
import ListFetch
import Logging
import NIOCore
import ScrollOffCore
import ServiceKit
import Sinkhole

/// Reads `[helper]`, `[dns]`, `[lists]` and `[metrics]` into a `HelperConfiguration` that starts
/// from the embedded defaults; `[profile]` and `[[profiles]]` are in `ProfileSection`. Each bound
/// below is the one the sample file documents.
struct FileSections {
    var configuration: HelperConfiguration
    /// `dns.block_encrypted_dns`: resolved to a list path after the flags (`--catalog`) are known.
    /// Left out, it follows `firewall.enabled` (SPEC §9b): a firewall that refuses DoH by address
    /// but lets the DoH names resolve would leave the easier half of the hole open.
    var blockEncryptedDNSSetting: Bool?
    var blockEncryptedDNS: Bool { blockEncryptedDNSSetting ?? configuration.firewall.enabled }

    /// The embedded defaults: what a missing file or an empty one means.
    init(base: RuntimePaths) {
        let listen = base.listen.compactMap { try? HostPort(parsing: $0) }
        configuration = HelperConfiguration(paths: base, listen: listen, upstreams: [])
    }

    mutating func read(_ root: TableReader) {
        readHelper(root.table("helper"))
        readDNS(root.table("dns"))
        readLists(root.table("lists"))
        readMetrics(root.table("metrics"))
        readFirewall(root.table("firewall"))
        readWeb(root.table("web"))
        readDigest(root.table("digest"))
        ProfileSection.read(root, into: &configuration)
        root.finish()
    }

    // MARK: [digest]

    /// The weekly digest's delivery hook: an absolute program path and its arguments, run without
    /// a shell; and how long it may run.
    private mutating func readDigest(_ t: TableReader) {
        let allowed = "[] (no hook) or an absolute program path and its arguments, such as [\"/usr/local/bin/notify-digest\", \"--to\", \"sam\"]"
        if let items = t.strings("command", allowed: allowed) {
            if let first = items.first, !first.value.hasPrefix("/") {
                t.log.report(first.path, "is \"\(first.value)\", not an absolute path (the hook runs without a shell or PATH search)",
                             allowed: allowed)
            }
            configuration.digestHook.command = items.map(\.value)
        }
        if let timeout = t.duration("timeout", in: .seconds(1)...(.minutes(5)), allowed: "1s to 5min") {
            configuration.digestHook.timeout = timeout
        }
        t.finish()
    }

    // MARK: [metrics]

    private mutating func readMetrics(_ t: TableReader) {
        let allowed = "\"\" (off) or ADDR:PORT such as \"127.0.0.1:9153\""
        if let text = t.string("listen", allowed: allowed), !text.isEmpty {
            do {
                configuration.metricsListen = try HostPort(parsing: text)
            } catch {
                t.report("listen", Self.problem(text, error), allowed: allowed)
            }
        }
        t.finish()
    }

    // MARK: [firewall]

    private mutating func readFirewall(_ t: TableReader) {
        var firewall = FirewallSettings()
        if let enabled = t.bool("enabled") { firewall.enabled = enabled }
        let modes = FirewallSettings.Mode.allCases.map(\.rawValue).joined(separator: " or ")
        if let mode = t.string("mode", allowed: modes) {
            if let parsed = FirewallSettings.Mode(rawValue: mode) { firewall.mode = parsed } else {
                t.report("mode", "is \"\(mode)\"", allowed: modes)
            }
        }
        let interfaceAllowed = "interface names such as [\"br-lan\"] (at most 15 characters: letters, digits, - _ . @)"
        if let items = t.strings("lan_interfaces", allowed: interfaceAllowed) {
            for item in items where !FirewallValues.isInterfaceName(item.value) {
                t.log.report(item.path, "is \"\(item.value)\", not an interface name", allowed: interfaceAllowed)
            }
            firewall.lanInterfaces = items.map(\.value)
        }
        let addressAllowed = "numeric addresses or networks such as \"192.0.2.10\" or \"2001:db8::/64\""
        if let items = t.strings("doh_addresses", allowed: addressAllowed) {
            for item in items where FirewallValues.addressFamily(item.value) == nil {
                t.log.report(item.path, "is \"\(item.value)\", not a numeric address or network", allowed: addressAllowed)
            }
            firewall.extraDoHAddresses = items.map(\.value)
        }
        if let resolve = t.bool("resolve_doh_names") { firewall.resolveDoHNames = resolve }
        if let mark = t.integer("mark", in: 1...0x7FFF_FFFF, allowed: "1 to 2147483647") { firewall.mark = UInt32(mark) }
        if firewall.enabled, firewall.mode == .router, firewall.lanInterfaces.isEmpty {
            t.report("lan_interfaces", "is empty, so router mode would cover no device",
                     allowed: "the interfaces the household's devices use, such as [\"br-lan\"]")
        }
        configuration.firewall = firewall
        t.finish()
    }

    // MARK: [web]

    /// The household page (SPEC §9a): on by default on loopback; `""` turns it off. A listen the
    /// file names is the person's wish, so failing to bind it stops the start (`webListenRequired`).
    private mutating func readWeb(_ t: TableReader) {
        let allowed = "\"\" (off) or ADDR:PORT such as \"127.0.0.1:\(HelperConfiguration.defaultWebPort)\" or \"0.0.0.0:\(HelperConfiguration.defaultWebPort)\" for the LAN"
        if let text = t.string("listen", allowed: allowed) {
            if text.isEmpty {
                configuration.webListen = nil
            } else {
                do {
                    configuration.webListen = try HostPort(parsing: text)
                    configuration.webListenRequired = true
                } catch {
                    t.report("listen", Self.problem(text, error), allowed: allowed)
                }
            }
        }
        if let timeout = t.duration("request_timeout", in: WebSettings.requestTimeoutRange, allowed: "1s to 60s") {
            configuration.web.requestTimeout = timeout
        }
        if let delay = t.duration("sign_in_max_delay", in: WebSettings.signInMaximumDelayRange, allowed: "1s to 1h") {
            configuration.web.signInMaximumDelay = delay
        }
        t.finish()
    }

    // MARK: [helper]

    private mutating func readHelper(_ t: TableReader) {
        if let dir = absolutePath(t, "state_dir", example: "/var/lib/scrolloff") { configuration.paths.stateDirectory = dir }
        if let socket = absolutePath(t, "control_socket", example: "/run/scrolloff/control.sock") {
            // sockaddr_un holds 108 bytes with the terminating NUL (unix(7)).
            if socket.utf8.count > 107 {
                t.report("control_socket", "is \(socket.utf8.count) bytes long", allowed: "an absolute path of at most 107 bytes (the limit of a Unix socket address)")
            } else {
                configuration.paths.controlSocket = socket
            }
        }
        if let mode = t.string("mode", allowed: "dns, hosts or both") {
            if let parsed = EnforcementMode(rawValue: mode) {
                configuration.enforcementMode = parsed
            } else {
                t.report("mode", "is \"\(mode)\"", allowed: "dns, hosts or both")
            }
        }
        if let hosts = absolutePath(t, "hosts_file", example: "/etc/hosts") { configuration.hostsFile = hosts }
        let levels = Logger.Level.allCases.map(\.rawValue)
        if let level = t.string("log_level", allowed: levels.joined(separator: ", ")) {
            if let parsed = Logger.Level(rawValue: level) {
                configuration.logLevel = parsed
            } else {
                t.report("log_level", "is \"\(level)\"", allowed: levels.joined(separator: ", "))
            }
        }
        if let threads = t.integer("threads", in: 0...64, allowed: "0 (one per core) to 64") {
            configuration.eventLoops = threads == 0 ? EventLoopScheduling.availableCores : threads
        }
        let total = t.integer("control_connections", in: 1...4096, allowed: "1 to 4096 connections")
        let perUser = t.integer("control_connections_per_user", in: 1...4096, allowed: "1 to 4096 connections, at most control_connections")
        let control = ControlConnectionLimits(total: total ?? configuration.control.total, perUser: perUser ?? configuration.control.perUser)
        if control.perUser > control.total {
            t.report("control_connections_per_user", "is \(control.perUser), more than control_connections (\(control.total))",
                     allowed: "at most control_connections")
        } else {
            configuration.control = control
        }
        t.finish()
    }

    /// A path that must be absolute: the helper runs from systemd, whose working directory is `/`,
    /// so a relative path would point somewhere nobody meant. "" keeps the default.
    private func absolutePath(_ t: TableReader, _ key: String, example: String) -> String? {
        let allowed = "\"\" (the default) or an absolute path such as \"\(example)\""
        guard let text = t.string(key, allowed: allowed), !text.isEmpty else { return nil }
        guard text.hasPrefix("/") else {
            t.report(key, "is \"\(text)\", a relative path", allowed: allowed)
            return nil
        }
        return text
    }

    // MARK: [dns]

    private mutating func readDNS(_ t: TableReader) {
        let listenAllowed = "ADDR:PORT with a numeric address, such as \"127.0.0.1:53\" or \"[::1]:53\"; port 0 picks a free one"
        if let items = t.strings("listen", allowed: listenAllowed) {
            let parsed = addresses(items, defaultPort: nil, allowed: listenAllowed, t: t)
            if items.isEmpty {
                t.report("listen", "is empty, so the helper would answer nobody", allowed: "one or more \(listenAllowed)")
            } else if let parsed {
                configuration.listen = parsed
            }
        }
        let upstreamAllowed = "[] (the nameservers of /etc/resolv.conf) or ADDR[:PORT] with a numeric address, such as \"9.9.9.9\" or \"[2620:fe::fe]:53\""
        if let items = t.strings("upstreams", allowed: upstreamAllowed),
           let parsed = addresses(items, defaultPort: 53, allowed: upstreamAllowed, t: t) {
            for (server, item) in zip(parsed, items) where ResolvConf.isOurselves(server, listen: configuration.listen) {
                t.log.report(item.path, "is \"\(item.value)\", this server's own address: every query would loop back to it",
                             allowed: "a resolver other than this helper")
            }
            configuration.upstreams = parsed
        }
        if let timeout = t.duration("upstream_timeout", in: Span(milliseconds: 50) ... .seconds(30), allowed: "50ms to 30s") {
            let amount = TimeAmount.milliseconds(timeout.milliseconds)
            // SPEC §9 "upstream timeout → SERVFAIL": the whole failover gets twice one upstream's time.
            configuration.forwarder.perUpstream = amount
            configuration.forwarder.overall = amount * 2
        }
        if let threshold = t.integer("unwanted_reply_threshold", in: 0...65_536, allowed: "0 (never) to 65536 datagrams") {
            configuration.forwarder.unwantedReplyThreshold = threshold
        }
        let modes = BlockingMode.allCases.map(\.rawValue).joined(separator: ", ")
        if let mode = t.string("blocking_mode", allowed: modes) {
            if let parsed = BlockingMode(rawValue: mode) { configuration.blockingMode = parsed } else {
                t.report("blocking_mode", "is \"\(mode)\"", allowed: modes)
            }
        }
        if let ttl = wholeSeconds(t, "blocked_ttl", .seconds(1) ... .seconds(10), allowed: "1s to 10s (SPEC §9: blocked answers live at most 10 s)") {
            configuration.blockedTTL = ttl
        }
        if let block = t.bool("block_encrypted_dns") { blockEncryptedDNSSetting = block }
        if let size = t.integer("cache_size", in: 1...10_000_000, allowed: "1 to 10000000 answers") {
            configuration.cache.capacity = size
        }
        let minimum = wholeSeconds(t, "cache_min_ttl", .zero ... .hours(1), allowed: "0 (keep upstream TTLs) to 1h")
        let maximum = wholeSeconds(t, "cache_max_ttl", .seconds(1) ... .hours(24 * 7), allowed: "1s to 7d")
        let negative = wholeSeconds(t, "cache_max_negative_ttl", .zero ... .hours(24), allowed: "0 (no negative caching) to 1d; RFC 2308 §5 suggests at most 3h")
        let stale = wholeSeconds(t, "serve_stale_max_age", .zero ... .hours(24 * 7), allowed: "0 (never serve stale) to 7d; RFC 8767 suggests 1d to 3d")
        let cache = configuration.cache
        let newMinimum = minimum ?? cache.minimumTTL, newMaximum = maximum ?? cache.maximumTTL
        if newMinimum > newMaximum {
            t.report("cache_min_ttl", "is \(newMinimum) s, more than cache_max_ttl (\(newMaximum) s)", allowed: "at most cache_max_ttl")
        } else {
            configuration.cache = CacheConfiguration(
                capacity: cache.capacity, minimumTTL: newMinimum, maximumTTL: newMaximum,
                maximumNegativeTTL: negative ?? cache.maximumNegativeTTL, maximumStaleAge: stale ?? cache.maximumStaleAge)
        }
        let rate = t.integer("rate_limit", in: 0...1_000_000, allowed: "0 (off) to 1000000 queries per second per client")
        let burst = t.integer("rate_limit_burst", in: 0...10_000_000, allowed: "0 (twice rate_limit) to 10000000 queries")
        if let rate, rate > 0 {
            let b = burst ?? 0
            configuration.rateLimit = RateLimit(queriesPerSecond: rate, burst: b == 0 ? rate * 2 : b)
        }
        readTCPLimits(t)
        t.finish()
    }

    /// `dns.tcp_*`: the bounds that keep one DNS-over-TCP client from taking the server (SPEC §9).
    private mutating func readTCPLimits(_ t: TableReader) {
        var tcp = configuration.tcp
        if let total = t.integer("tcp_connections", in: 1...65_536, allowed: "1 to 65536 connections") { tcp.maximumConnections = total }
        if let perClient = t.integer("tcp_connections_per_client", in: 1...65_536, allowed: "1 to 65536 connections, at most tcp_connections") {
            tcp.maximumConnectionsPerClient = perClient
        }
        if let queries = t.integer("tcp_queries_per_connection", in: 1...65_535, allowed: "1 to 65535 queries") {
            tcp.maximumInFlightPerConnection = queries
        }
        if let queries = t.integer("tcp_queries_per_client", in: 1...65_535, allowed: "1 to 65535 queries") {
            tcp.maximumInFlightPerClient = queries
        }
        if let idle = t.duration("tcp_idle_timeout", in: Span(milliseconds: 100) ... .minutes(10), allowed: "100ms to 10min") {
            tcp.idleTimeout = .milliseconds(idle.milliseconds)
        }
        // A reply larger than the bound is still sent whole; the bound only decides when to stop reading.
        if let unsent = t.integer("tcp_unsent_bytes", in: 4096...64 << 20, allowed: "4096 to 67108864 bytes") {
            tcp.maximumUnsentBytes = unsent
        }
        if tcp.maximumConnectionsPerClient > tcp.maximumConnections {
            t.report("tcp_connections_per_client", "is \(tcp.maximumConnectionsPerClient), more than tcp_connections (\(tcp.maximumConnections))",
                     allowed: "at most tcp_connections")
        } else {
            configuration.tcp = tcp
        }
    }

    /// Listen or upstream addresses; nil when any is wrong (each reported) or two are the same.
    private func addresses(_ items: [(value: String, path: String)], defaultPort: Int?, allowed: String, t: TableReader) -> [HostPort]? {
        var out: [HostPort] = []
        var failed = false
        for item in items {
            do {
                let address = try HostPort(parsing: item.value, defaultPort: defaultPort)
                if out.contains(address), address.port != 0 {
                    t.log.report(item.path, "is \(address) a second time", allowed: "each address once")
                    failed = true
                }
                out.append(address)
            } catch {
                t.log.report(item.path, Self.problem(item.value, error), allowed: allowed)
                failed = true
            }
        }
        return failed ? nil : out
    }

    /// What is wrong with an address, after the value itself (`HostPortError` repeats the text).
    static func problem(_ text: String, _ error: HostPortError) -> String {
        let reason = switch error {
        case .malformed: "which is not ADDR:PORT or [IPV6]:PORT"
        case .badPort: "whose port is outside 0…65535"
        case .missingPort: "which has no port"
        // A name would have to be resolved by the very resolver being configured.
        case .notAnAddress: "which is not a numeric IPv4 or IPv6 address; names cannot be used here"
        }
        return "is \"\(text)\", \(reason)"
    }

    /// A TTL: a whole number of seconds, written bare (`10`) or with units (`"10s"`, `"1h"`).
    private func wholeSeconds(_ t: TableReader, _ key: String, _ range: ClosedRange<Span>, allowed: String) -> UInt32? {
        guard let span = t.duration(key, in: range, allowed: allowed, integerSeconds: true) else { return nil }
        guard span.milliseconds % 1000 == 0 else {
            t.report(key, "is \(span.milliseconds) ms, not a whole number of seconds (DNS counts TTLs in seconds)", allowed: allowed)
            return nil
        }
        return UInt32(span.milliseconds / 1000)
    }

    // MARK: [lists]

    private mutating func readLists(_ t: TableReader) {
        let catalogAllowed = "\"\" (found next to the install) or the absolute path of the blocklists folder"
        if let catalog = t.string("catalog", allowed: catalogAllowed), !catalog.isEmpty {
            if catalog.hasPrefix("/") { configuration.catalogPath = catalog } else {
                t.report("catalog", "is \"\(catalog)\", a relative path", allowed: catalogAllowed)
            }
        }
        // At least 15 min: list servers rate-limit clients, and lists rarely change faster than hourly.
        if let period = t.duration("refresh_period", in: .minutes(15) ... .hours(24 * 30), allowed: "15min to 30d") {
            configuration.listRefreshPeriod = period
        }
        // SPEC §11: a group member's file:// source must lie under one of these folders (none by
        // default: file:// is an administrator's), and their http(s) source on a public address
        // unless its address is allowed here.
        let foldersAllowed = "absolute folder paths such as [\"/srv/scrolloff-lists\"], without . or .. parts"
        if let items = t.strings("member_file_folders", allowed: foldersAllowed) {
            var folders: [String] = []
            for item in items {
                guard item.value.hasPrefix("/"), item.value != "/",
                      !item.value.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
                    t.log.report(item.path, "is \"\(item.value)\", not a plain absolute folder other than /", allowed: foldersAllowed)
                    continue
                }
                folders.append(item.value)
            }
            configuration.listSourceRules.memberFolders = folders
        }
        let privateAllowed = "numeric addresses or networks such as \"127.0.0.1\" or \"192.168.1.0/24\" or \"fd00::/64\""
        if let items = t.strings("allow_private_hosts", allowed: privateAllowed) {
            var networks: [AddressNetwork] = []
            for item in items {
                guard let network = AddressNetwork(item.value) else {
                    t.log.report(item.path, "is \"\(item.value)\", not a numeric address or network (names are not resolved here)",
                                 allowed: privateAllowed)
                    continue
                }
                networks.append(network)
            }
            configuration.listSourceRules.allowedPrivate = networks
        }
        var seenNames: [String: String] = [:]
        var sources: [ConfiguredListSource] = []
        for source in t.tables("source") {
            if let list = ListSourceSection.read(source, seenNames: &seenNames) { sources.append(list) }
            source.finish()
        }
        configuration.listSources = sources
        t.finish()
    }
}
