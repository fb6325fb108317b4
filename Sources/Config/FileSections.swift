import ControlServer
import Engine
import Firewall
import Foundation
import HouseholdPage
import ListFetch
import Logging
import NIOCore
import PostgresStore
import ScrollOffCore
import ServiceKit
import TOMLKit
import Sinkhole

/// Reads `[helper]`, `[dns]`, `[lists]`, `[metrics]`, `[firewall]`, `[web]` and `[digest]` into a
/// `HelperConfiguration`; `[profile]` and `[[profiles]]` are in `ProfileSection`. Every key, its
/// bounds and the words of its messages are declared in `ConfigurationKeys`; this type does what
/// a value means and the checks that relate two keys.
struct FileSections {
    var configuration: HelperConfiguration
    /// `dns.block_encrypted_dns`: resolved to a list path after the flags (`--catalog`) are known.
    /// Left out, it follows `firewall.enabled` (SPEC §9b): a firewall that refuses DoH by address
    /// but lets the DoH names resolve would leave the easier half of the hole open.
    var blockEncryptedDNSSetting: Bool?
    var blockEncryptedDNS: Bool { blockEncryptedDNSSetting ?? configuration.firewall.enabled }
    /// `[[allowances]]` entries that are names, not domains: checked against the catalog after the
    /// flags (`--catalog`) are known.
    var allowanceNames: [(word: String, path: String)] = []

    /// The embedded defaults: what a missing file or an empty one means. Read from the declared
    /// defaults (`ConfigurationKeys.defaultsDocument`), so a default is changed in its declaration;
    /// the rest (listen addresses, folders) come from `base`, which depends on who runs the helper.
    init(base: RuntimePaths) {
        let listen = base.listen.compactMap { try? HostPort(parsing: $0) }
        configuration = HelperConfiguration(paths: base, listen: listen, upstreams: [])
        let text = ConfigurationKeys.defaultsDocument
        guard let document = try? TOMLTable(string: text) else {
            assertionFailure("the declared defaults are not TOML:\n\(text)")
            return
        }
        let log = ProblemLog(index: KeyLineIndex(text: text))
        read(TableReader(table: document, path: "", log: log))
        // A declared default its own reader refuses is a mistake here; ConfigurationKeysTests finds it.
        assert(log.problems.isEmpty, "the declared defaults do not read: \(log.problems)")
    }

    mutating func read(_ root: TableReader) {
        readHelper(root.table(.helper))
        readDNS(root.table(.dns))
        readLists(root.table(.lists))
        readMetrics(root.table(.metrics))
        readFirewall(root.table(.firewall))
        readWeb(root.table(.web))
        readDigest(root.table(.digest))
        readStore(root.table(.store))
        readNotify(root.table(.notify))
        ProfileSection.read(root, into: &configuration)
        let names = AllowanceSection.read(root, into: &configuration)
        allowanceNames = names
        root.finish()
    }

    // MARK: [digest]

    /// The weekly digest's delivery hook: an absolute program path and its arguments, run without
    /// a shell; and how long it may run.
    private mutating func readDigest(_ t: TableReader) {
        readHook(t, command: DigestKeys.command, timeout: DigestKeys.timeout, into: \.digestHook)
    }

    /// A hook's table (`[digest]`, `[notify]`): the program must be an absolute path, since it runs
    /// without a shell or PATH search.
    private mutating func readHook(_ t: TableReader, command: Setting, timeout: Setting, into hook: WritableKeyPath<HelperConfiguration, DigestHookSettings>) {
        if let items = t.strings(command) {
            if let first = items.first, !first.value.hasPrefix("/") {
                t.log.report(first.path, "is \"\(first.value)\", not an absolute path (the hook runs without a shell or PATH search)",
                             allowed: command.allowed)
            }
            configuration[keyPath: hook].command = items.map(\.value)
        }
        if let length = t.duration(timeout) { configuration[keyPath: hook].timeout = length }
        t.finish()
    }

    // MARK: [store]

    /// The backend and, for PostgreSQL, a URL that parses (the message says what to write), an
    /// absolute password file and CA file. Whether the server answers is `doctor`'s, not the file's.
    private mutating func readStore(_ t: TableReader) {
        var store = configuration.store
        if let backend = t.choice(StoreKeys.backend, as: StoreSettings.Backend.self) { store.backend = backend }
        if let url = t.string(StoreKeys.url) { store.url = url }
        for (setting, path) in [(StoreKeys.passwordFile, \StoreSettings.passwordFile), (StoreKeys.tlsCAFile, \StoreSettings.tlsCAFile)] {
            guard let text = t.string(setting) else { continue }
            if !text.isEmpty, !text.hasPrefix("/") { t.report(setting, "is \"\(text)\", not an absolute path") }
            store[keyPath: path] = text
        }
        if let node = t.string(StoreKeys.node) {
            let allowed = node.count <= 63 && node.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
            if !allowed { t.report(StoreKeys.node, "is \"\(node)\", not a name of letters, digits, '-' and '.'") }
            store.node = node
        }
        switch store.backend {
        case .sqlite:
            if !store.url.isEmpty {
                t.report(StoreKeys.url, "is set but backend is \"sqlite\", which keeps the state in state_dir; set backend = \"postgresql\" to use the server, or remove url")
            }
        case .postgresql:
            if store.url.isEmpty {
                t.report(StoreKeys.url, "is empty but backend is \"postgresql\"; write the server's URL, such as \(PostgresLocation.example)")
            } else {
                do throws(PostgresLocationError) { _ = try PostgresLocation(parsing: store.url) } catch {
                    t.report(StoreKeys.url, "is \"\(store.url)\": \(error.problem); write \(PostgresLocation.example)")
                }
            }
        }
        configuration.store = store
        t.finish()
    }

    // MARK: [notify]

    /// `[notify]`: the same shape as `[digest]`, for a new request for time.
    private mutating func readNotify(_ t: TableReader) {
        readHook(t, command: NotifyKeys.command, timeout: NotifyKeys.timeout, into: \.notifyHook)
    }

    // MARK: [metrics]

    private mutating func readMetrics(_ t: TableReader) {
        let listen = MetricsKeys.listen
        if let text = t.string(listen) {
            if text.isEmpty {
                configuration.metricsListen = nil
            } else {
                do {
                    configuration.metricsListen = try HostPort(parsing: text)
                } catch {
                    t.report(listen, Self.problem(text, error))
                }
            }
        }
        t.finish()
    }

    // MARK: [firewall]

    private mutating func readFirewall(_ t: TableReader) {
        var firewall = configuration.firewall
        if let enabled = t.bool(FirewallKeys.enabled) { firewall.enabled = enabled }
        if let mode = t.choice(FirewallKeys.mode, as: FirewallSettings.Mode.self) { firewall.mode = mode }
        let interfaces = FirewallKeys.lanInterfaces
        if let items = t.strings(interfaces) {
            for item in items where !FirewallValues.isInterfaceName(item.value) {
                t.log.report(item.path, "is \"\(item.value)\", not an interface name", allowed: interfaces.allowed)
            }
            firewall.lanInterfaces = items.map(\.value)
        }
        let addresses = FirewallKeys.dohAddresses
        if let items = t.strings(addresses) {
            for item in items where FirewallValues.addressFamily(item.value) == nil {
                t.log.report(item.path, "is \"\(item.value)\", not a numeric address or network", allowed: addresses.allowed)
            }
            firewall.extraDoHAddresses = items.map(\.value)
        }
        if let resolve = t.bool(FirewallKeys.resolveDoHNames) { firewall.resolveDoHNames = resolve }
        if let mark = t.integer(FirewallKeys.mark) { firewall.mark = UInt32(mark) }
        if firewall.enabled, firewall.mode == .router, firewall.lanInterfaces.isEmpty {
            t.report(interfaces, "is empty, so router mode would cover no device",
                     allowed: "the interfaces the household's devices use, such as [\"br-lan\"]")
        }
        configuration.firewall = firewall
        t.finish()
    }

    // MARK: [web]

    /// The household page (SPEC §9a): on by default on loopback; `""` turns it off. A listen the
    /// file names is the person's wish, so failing to bind it stops the start (`webListenRequired`).
    private mutating func readWeb(_ t: TableReader) {
        let listen = WebKeys.listen
        // One address, or a list of them (a router's LAN address and loopback); "" and [] are off.
        if let items = t.stringOrStrings(listen),
           let parsed = addresses(items.filter { !$0.value.isEmpty }, defaultPort: nil, allowed: listen.allowed, t: t) {
            configuration.webListenAddresses = parsed
            configuration.webListenRequired = !parsed.isEmpty
        }
        if let timeout = t.duration(WebKeys.requestTimeout) { configuration.web.requestTimeout = timeout }
        if let delay = t.duration(WebKeys.signInMaxDelay) { configuration.web.signInMaximumDelay = delay }
        t.finish()
    }

    // MARK: [helper]

    private mutating func readHelper(_ t: TableReader) {
        if let dir = absolutePath(t, HelperKeys.stateDir) { configuration.paths.stateDirectory = dir }
        let controlSocket = HelperKeys.controlSocket
        if let socket = absolutePath(t, controlSocket) {
            // sockaddr_un holds 108 bytes with the terminating NUL (unix(7)).
            if socket.utf8.count > 107 {
                t.report(controlSocket, "is \(socket.utf8.count) bytes long", allowed: "an absolute path of at most 107 bytes (the limit of a Unix socket address)")
            } else {
                configuration.paths.controlSocket = socket
            }
        }
        if let mode = t.choice(HelperKeys.mode, as: EnforcementMode.self) { configuration.enforcementMode = mode }
        if let hosts = absolutePath(t, HelperKeys.hostsFile) { configuration.hostsFile = hosts }
        if let level = t.choice(HelperKeys.logLevel, as: Logger.Level.self) { configuration.logLevel = level }
        if let threads = t.integer(HelperKeys.threads) {
            configuration.eventLoops = threads == 0 ? EventLoopScheduling.availableCores : threads
        }
        let totalKey = HelperKeys.controlConnections, perUserKey = HelperKeys.controlConnectionsPerUser
        let total = t.integer(totalKey)
        let perUser = t.integer(perUserKey)
        let control = ControlConnectionLimits(total: total ?? configuration.control.total, perUser: perUser ?? configuration.control.perUser)
        if control.perUser > control.total {
            t.report(perUserKey, "is \(control.perUser), more than \(totalKey.key) (\(control.total))", allowed: "at most \(totalKey.key)")
        } else {
            configuration.control = control
        }
        t.finish()
    }

    /// A path that must be absolute: the helper runs from systemd, whose working directory is `/`,
    /// so a relative path would point somewhere nobody meant. "" keeps the default.
    private func absolutePath(_ t: TableReader, _ setting: Setting) -> String? {
        guard let text = t.string(setting), !text.isEmpty else { return nil }
        guard text.hasPrefix("/") else {
            t.report(setting, "is \"\(text)\", a relative path")
            return nil
        }
        return text
    }

    // MARK: [dns]

    private mutating func readDNS(_ t: TableReader) {
        let listen = DNSKeys.listen
        if let items = t.strings(listen) {
            let parsed = addresses(items, defaultPort: nil, allowed: listen.allowed, t: t)
            if items.isEmpty {
                t.report(listen, "is empty, so the helper would answer nobody", allowed: "one or more \(listen.allowed)")
            } else if let parsed {
                configuration.listen = parsed
            }
        }
        let upstreams = DNSKeys.upstreams
        if let items = t.strings(upstreams),
           let parsed = addresses(items, defaultPort: 53, allowed: upstreams.allowed, t: t) {
            for (server, item) in zip(parsed, items) where ResolvConf.isOurselves(server, listen: configuration.listen) {
                t.log.report(item.path, "is \"\(item.value)\", this server's own address: every query would loop back to it",
                             allowed: "a resolver other than this helper")
            }
            configuration.upstreams = parsed
        }
        if let timeout = t.duration(DNSKeys.upstreamTimeout) {
            let amount = TimeAmount.milliseconds(timeout.milliseconds)
            // SPEC §9 "upstream timeout → SERVFAIL": the whole failover gets twice one upstream's time.
            configuration.forwarder.perUpstream = amount
            configuration.forwarder.overall = amount * 2
        }
        if let threshold = t.integer(DNSKeys.unwantedReplyThreshold) { configuration.forwarder.unwantedReplyThreshold = threshold }
        if let mode = t.choice(DNSKeys.blockingMode, as: BlockingMode.self) { configuration.blockingMode = mode }
        if let ttl = wholeSeconds(t, DNSKeys.blockedTTL) { configuration.blockedTTL = ttl }
        if let block = t.bool(DNSKeys.blockEncryptedDNS) { blockEncryptedDNSSetting = block }
        if let size = t.integer(DNSKeys.cacheSize) { configuration.cache.capacity = size }
        let minimumKey = DNSKeys.cacheMinTTL, maximumKey = DNSKeys.cacheMaxTTL
        let minimum = wholeSeconds(t, minimumKey)
        let maximum = wholeSeconds(t, maximumKey)
        let negative = wholeSeconds(t, DNSKeys.cacheMaxNegativeTTL)
        let stale = wholeSeconds(t, DNSKeys.serveStaleMaxAge)
        let cache = configuration.cache
        let newMinimum = minimum ?? cache.minimumTTL, newMaximum = maximum ?? cache.maximumTTL
        if newMinimum > newMaximum {
            t.report(minimumKey, "is \(newMinimum) s, more than \(maximumKey.key) (\(newMaximum) s)", allowed: "at most \(maximumKey.key)")
        } else {
            configuration.cache = CacheConfiguration(
                capacity: cache.capacity, minimumTTL: newMinimum, maximumTTL: newMaximum,
                maximumNegativeTTL: negative ?? cache.maximumNegativeTTL, maximumStaleAge: stale ?? cache.maximumStaleAge)
        }
        let rate = t.integer(DNSKeys.rateLimit)
        let burst = t.integer(DNSKeys.rateLimitBurst)
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
        if let total = t.integer(DNSKeys.tcpConnections) { tcp.maximumConnections = total }
        if let perClient = t.integer(DNSKeys.tcpConnectionsPerClient) { tcp.maximumConnectionsPerClient = perClient }
        if let queries = t.integer(DNSKeys.tcpQueriesPerConnection) { tcp.maximumInFlightPerConnection = queries }
        if let queries = t.integer(DNSKeys.tcpQueriesPerClient) { tcp.maximumInFlightPerClient = queries }
        if let idle = t.duration(DNSKeys.tcpIdleTimeout) { tcp.idleTimeout = .milliseconds(idle.milliseconds) }
        // A reply larger than the bound is still sent whole; the bound only decides when to stop reading.
        if let unsent = t.integer(DNSKeys.tcpUnsentBytes) { tcp.maximumUnsentBytes = unsent }
        if tcp.maximumConnectionsPerClient > tcp.maximumConnections {
            let total = DNSKeys.tcpConnections.key
            t.report(DNSKeys.tcpConnectionsPerClient, "is \(tcp.maximumConnectionsPerClient), more than \(total) (\(tcp.maximumConnections))",
                     allowed: "at most \(total)")
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
    private func wholeSeconds(_ t: TableReader, _ setting: Setting) -> UInt32? {
        guard let span = t.duration(setting) else { return nil }
        guard span.milliseconds % 1000 == 0 else {
            t.report(setting, "is \(span.milliseconds) ms, not a whole number of seconds (DNS counts TTLs in seconds)")
            return nil
        }
        return UInt32(span.milliseconds / 1000)
    }

    // MARK: [lists]

    private mutating func readLists(_ t: TableReader) {
        let catalogKey = ListKeys.catalog
        if let catalog = t.string(catalogKey), !catalog.isEmpty {
            if catalog.hasPrefix("/") { configuration.catalogPath = catalog } else {
                t.report(catalogKey, "is \"\(catalog)\", a relative path")
            }
        }
        // At least 15 min: list servers rate-limit clients, and lists rarely change faster than hourly.
        if let period = t.duration(ListKeys.refreshPeriod) { configuration.listRefreshPeriod = period }
        // SPEC §11: a group member's file:// source must lie under one of these folders (none by
        // default: file:// is an administrator's), and their http(s) source on a public address
        // unless its address is allowed here.
        let foldersKey = ListKeys.memberFileFolders
        if let items = t.strings(foldersKey) {
            var folders: [String] = []
            for item in items {
                guard item.value.hasPrefix("/"), item.value != "/",
                      !item.value.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
                    t.log.report(item.path, "is \"\(item.value)\", not a plain absolute folder other than /", allowed: foldersKey.allowed)
                    continue
                }
                folders.append(item.value)
            }
            configuration.listSourceRules.memberFolders = folders
        }
        let privateKey = ListKeys.allowPrivateHosts
        if let items = t.strings(privateKey) {
            var networks: [AddressNetwork] = []
            for item in items {
                guard let network = AddressNetwork(item.value) else {
                    t.log.report(item.path, "is \"\(item.value)\", not a numeric address or network (names are not resolved here)",
                                 allowed: privateKey.allowed)
                    continue
                }
                networks.append(network)
            }
            configuration.listSourceRules.allowedPrivate = networks
        }
        // The household's bound on every list together: memory a small router has (ListBound).
        if let names = t.integer(ListKeys.maxNames) { configuration.listBound.maxNames = names }
        if let lists = t.integer(ListKeys.maxLists) { configuration.listBound.maxLists = lists }
        var seenNames: [String: String] = [:]
        var sources: [ConfiguredListSource] = []
        for source in t.tables(.listsSource) {
            if let list = ListSourceSection.read(source, seenNames: &seenNames) { sources.append(list) }
            source.finish()
        }
        configuration.listSources = sources
        t.finish()
    }
}
