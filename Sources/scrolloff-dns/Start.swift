import ArgumentParser
import Helper
import Logging
import NIOCore
import Sinkhole

extension BlockingMode: ExpressibleByArgument {}

/// `scrolloff-dns start` (SPEC §13).
struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the helper in the foreground with the embedded defaults unless flags say otherwise."
    )

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case dns, hosts, both
    }

    @Option(name: .customLong("config"), help: "Configuration file (default /etc/scrolloff/scrolloff.toml as root).")
    var configFile: String?

    @Option(name: .customLong("listen"), help: "ADDR:PORT to serve DNS on; repeat for more. Port 0 picks a free one.")
    var listen: [String] = []

    @Option(name: .customLong("upstream"), help: "ADDR[:PORT] of a resolver to forward to; repeat for failover. Default: /etc/resolv.conf.")
    var upstreams: [String] = []

    @Option(name: .customLong("state-dir"), help: "Folder for the database and downloaded lists.")
    var stateDirectory: String?

    @Option(name: .customLong("control-socket"), help: "Path of the control socket the CLI talks to.")
    var controlSocket: String?

    @Option(name: .customLong("mode"), help: "How to enforce: dns (the sinkhole), hosts or both.")
    var mode: Mode = .dns

    @Option(name: .customLong("hosts-file"), help: "The hosts file of hosts mode (default /etc/hosts).")
    var hostsFile: String?

    @Option(name: .customLong("blocking-mode"), help: "Answer to blocked names: null (0.0.0.0 and ::), nxdomain or refused.")
    var blockingMode: BlockingMode = .null

    @Option(name: .customLong("catalog"), help: "The curated lists folder (blocklists/); found next to the install or the source tree by default.")
    var catalog: String?

    @Option(name: .customLong("blocklist"), help: .hidden)
    var blocklist: String?

    @Option(name: .customLong("managed-list"), help: .hidden)
    var managedList: String?

    @Option(name: .customLong("managed-ttl-cap"), help: .hidden)
    var managedTTLCap: UInt32 = 60

    @Option(name: .customLong("doh-endpoints"), help: "A list of DNS-over-HTTPS hosts to block, one per line.")
    var dohEndpoints: String?

    @Option(name: .customLong("threads"), help: .hidden)
    var threads: Int = System.coreCount

    @Option(name: .customLong("upstream-timeout-ms"), help: .hidden)
    var upstreamTimeoutMilliseconds: Int64 = 2000

    @Option(name: .customLong("cache-size"), help: .hidden)
    var cacheSize: Int = 100_000

    @Option(name: .customLong("metrics"), help: "ADDR:PORT to serve Prometheus metrics on (GET /metrics); off unless given.")
    var metrics: String?

    @Option(name: .customLong("log-level"), help: .hidden)
    var logLevel: String = "info"

    func validate() throws {
        guard mode == .dns else {
            throw ValidationError("--mode \(mode.rawValue) is not available in this build yet; use --mode dns")
        }
        guard threads >= 1, threads <= 64 else { throw ValidationError("--threads must be between 1 and 64") }
        guard upstreamTimeoutMilliseconds >= 50 else { throw ValidationError("--upstream-timeout-ms must be at least 50") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        for text in listen {
            do { _ = try HostPort(parsing: text) } catch { throw ValidationError("--listen \(error)") }
        }
        if let metrics {
            do { _ = try HostPort(parsing: metrics) } catch { throw ValidationError("--metrics \(error)") }
        }
        for text in upstreams {
            do { _ = try HostPort(parsing: text, defaultPort: 53) } catch { throw ValidationError("--upstream \(error)") }
        }
    }

    func run() async throws {
        var logger = Logger(label: "scrolloff-dns")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        if configFile != nil || hostsFile != nil {
            // Accepted so that scripts and unit files written against SPEC §13 keep working; the
            // configuration file and hosts mode arrive with their own issues.
            logger.notice("--config and --hosts-file are accepted but not used by this build yet")
        }
        var paths = RuntimePaths.current()
        if let configFile { paths.configFile = configFile }
        if let stateDirectory { paths.stateDirectory = stateDirectory }
        if let controlSocket { paths.controlSocket = controlSocket }
        let listenAddresses = try (listen.isEmpty ? paths.listen : listen).map { try HostPort(parsing: $0) }
        let upstreamAddresses = upstreams.isEmpty
            ? ResolvConf.upstreams(excluding: listenAddresses)
            : try upstreams.map { try HostPort(parsing: $0, defaultPort: 53) }
        let perUpstream = TimeAmount.milliseconds(upstreamTimeoutMilliseconds)
        var configuration = HelperConfiguration(
            paths: paths, listen: listenAddresses, upstreams: upstreamAddresses, blockingMode: blockingMode,
            blocklistPath: blocklist, dohEndpointsPath: dohEndpoints, eventLoops: threads,
            forwarder: .init(perUpstream: perUpstream, overall: perUpstream * 2),
            cache: CacheConfiguration(capacity: cacheSize))
        configuration.managedListPath = managedList
        configuration.catalogPath = catalog
        configuration.managedTTLCap = managedTTLCap
        if let metrics { configuration.metricsListen = try HostPort(parsing: metrics) }
        try await HelperMain.run(configuration, logger: logger)
    }
}
