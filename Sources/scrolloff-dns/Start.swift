import ArgumentParser
import Config
import Helper
import Logging
import NIOCore
import ServiceKit
import Sinkhole

extension BlockingMode: ExpressibleByArgument {}

/// `scrolloff-dns start` (SPEC §13).
struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the helper in the foreground: the configuration file's settings, or the embedded defaults, with flags taking precedence."
    )

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case dns, hosts, both
    }

    @Option(name: .customLong("config"), help: "Configuration file (default /etc/scrolloff/scrolloff.toml as root); its settings apply unless a flag says otherwise.")
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
    var mode: Mode?

    @Option(name: .customLong("hosts-file"), help: "The hosts file of hosts mode (default /etc/hosts).")
    var hostsFile: String?

    @Option(name: .customLong("blocking-mode"), help: "Answer to blocked names: null (0.0.0.0 and ::), nxdomain or refused.")
    var blockingMode: BlockingMode?

    @Option(name: .customLong("catalog"), help: "The curated lists folder (blocklists/); found next to the install or the source tree by default.")
    var catalog: String?

    @Option(name: .customLong("doh-endpoints"), help: "A list of DNS-over-HTTPS hosts to block, one per line.")
    var dohEndpoints: String?

    @Option(name: .customLong("threads"), help: .hidden)
    var threads: Int?

    @Option(name: .customLong("upstream-timeout-ms"), help: .hidden)
    var upstreamTimeoutMilliseconds: Int64?

    @Option(name: .customLong("cache-size"), help: .hidden)
    var cacheSize: Int?

    @Option(name: .customLong("metrics"), help: "ADDR:PORT to serve Prometheus metrics on (GET /metrics); off unless given.")
    var metrics: String?

    @Option(name: .customLong("web-listen"), help: "ADDR:PORT of the household page (default 127.0.0.1:5381), or off. Port 0 picks a free one.")
    var webListen: String?

    @Option(name: .customLong("log-level"), help: .hidden)
    var logLevel: String?

    func validate() throws {
        if let hostsFile, !hostsFile.hasPrefix("/") {
            throw ValidationError("--hosts-file must be an absolute path, such as /etc/hosts")
        }
        if let threads, !(1...64).contains(threads) { throw ValidationError("--threads must be between 1 and 64") }
        if let upstreamTimeoutMilliseconds, upstreamTimeoutMilliseconds < 50 {
            throw ValidationError("--upstream-timeout-ms must be at least 50")
        }
        if let cacheSize, cacheSize < 1 { throw ValidationError("--cache-size must be at least 1") }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        _ = try overrides()
    }

    /// The flags given, as overrides of the configuration file (flags > file > defaults).
    func overrides() throws -> ConfigurationOverrides {
        var o = ConfigurationOverrides()
        o.stateDirectory = stateDirectory
        o.controlSocket = controlSocket
        if !listen.isEmpty {
            o.listen = try listen.map { text in
                do { return try HostPort(parsing: text) } catch { throw ValidationError("--listen \(error)") }
            }
        }
        if !upstreams.isEmpty {
            o.upstreams = try upstreams.map { text in
                do { return try HostPort(parsing: text, defaultPort: 53) } catch { throw ValidationError("--upstream \(error)") }
            }
        }
        if let metrics {
            do { o.metricsListen = try HostPort(parsing: metrics) } catch { throw ValidationError("--metrics \(error)") }
        }
        if let webListen {
            if webListen == "off" {
                o.webListen = .some(nil)
            } else {
                do { o.webListen = .some(try HostPort(parsing: webListen)) } catch { throw ValidationError("--web-listen \(error)") }
            }
        }
        o.blockingMode = blockingMode
        o.threads = threads
        o.upstreamTimeout = upstreamTimeoutMilliseconds.map { TimeAmount.milliseconds($0) }
        o.cacheSize = cacheSize
        o.logLevel = logLevel.flatMap { Logger.Level(rawValue: $0) }
        o.catalogPath = catalog
        o.dohEndpointsPath = dohEndpoints
        o.enforcementMode = mode.map { EnforcementMode(rawValue: $0.rawValue) ?? .dns }
        o.hostsFile = hostsFile
        return o
    }

    /// Reads the configuration file again and applies the same flags: what start-up used, and what
    /// a reload (SIGHUP) calls to get the new configuration. A missing or bad file throws
    /// `ConfigurationError`, and a reload then keeps the configuration in force.
    func configurationLoader() throws -> @Sendable () throws -> HelperConfiguration {
        let overrides = try overrides()
        let path = configFile
        let base = RuntimePaths.current()
        return { try ConfigurationFile.load(path: path, base: base, overrides: overrides) }
    }

    func run() async throws {
        var logger = Logger(label: "scrolloff-dns")
        let load = try configurationLoader()
        let configuration = try load()
        logger.logLevel = configuration.logLevel
        try await HelperMain.run(configuration, logger: logger, reloadConfiguration: load)
    }
}
