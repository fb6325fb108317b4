import Logging
import NIOCore
import ScrollOffCore
import Sinkhole
import Store

/// What one reload did: for its one log line and for tests.
public struct ReloadReport: Sendable, Equatable {
    /// Settings that changed and are in force now (configuration file keys).
    public var applied: [String] = []
    /// Settings that changed but only take effect at the next restart; their old values stay.
    public var needsRestart: [String] = []
    /// Profile changes kept back while a lock is in force (`HelperEngine.applyConfiguredProfiles`).
    public var heldBack: [String] = []
    /// Why the new configuration was not taken; nil when it was. The old one then stays whole.
    public var failure: String?

    public init() {}
}

/// The parts of the running helper a reload can change, each swappable on its own without
/// stopping the server (ARCHITECTURE principle 6).
public struct LiveSettings: Sendable {
    public let forwarder: Forwarder
    public let blocking: BlockingSettingsStore
    public let cache: AnswerCache
    public let rateLimiter: ClientRateLimiter
    public let lists: ListsController
    public let engine: HelperEngine
    public let logLevel: LiveLogLevel
}

/// A reload was refused before anything changed; the message says what to fix.
public struct ConfigurationRejected: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Takes a new configuration on SIGHUP (issue 6; ARCHITECTURE principle 5 "on reload keep the old
/// config and report"): reads it, validates every part before touching anything, then applies
/// what can change while running and reports the rest as waiting for a restart.
///
/// One actor, so two SIGHUPs in a row apply one after the other, never interleaved.
public actor ConfigurationReloader {
    private var current: HelperConfiguration
    private let source: @Sendable () throws -> HelperConfiguration
    private let live: LiveSettings
    private let logger: Logger

    public init(start: HelperConfiguration, source: @escaping @Sendable () throws -> HelperConfiguration,
                live: LiveSettings, logger: Logger) {
        current = start
        self.source = source
        self.live = live
        self.logger = logger
    }

    /// The configuration in force (restart-only settings as they were at start).
    public var configuration: HelperConfiguration { current }

    /// Puts the start configuration's profiles and list sources in force: file values apply at
    /// every start, not only at first setup. Fatal when the database refuses the write.
    func applyAtStart() async throws(ConfigurationRejected) {
        let start = current
        try Self.validate(start)
        do {
            let report = try await live.engine.applyConfiguredProfiles(default: start.defaultProfile, profiles: start.profiles)
            for held in report.heldBack { logger.warning("configuration: \(held)") }
        } catch { throw ConfigurationRejected("the configured profiles could not be saved: \(error)") }
        await live.lists.setConfiguredSources(
            start.listSources, refreshPeriod: start.listRefreshPeriod, definedIn: start.paths.configFile)
    }

    /// Reads the configuration again and applies it (SIGHUP). Never throws: a bad file is logged in
    /// one line saying what to fix, and everything stays as it was.
    @discardableResult
    public func reload() async -> ReloadReport {
        var report = ReloadReport()
        let next: HelperConfiguration
        do {
            next = try source()
            try Self.validate(next)
        } catch {
            return refuse("\(error)", report: &report)
        }

        let old = current
        var kept = next
        // Settings bound to sockets, threads and folders opened at start: reported, old value kept.
        func restartOnly<T: Equatable>(_ key: String, _ path: WritableKeyPath<HelperConfiguration, T>) {
            guard old[keyPath: path] != next[keyPath: path] else { return }
            report.needsRestart.append(key)
            kept[keyPath: path] = old[keyPath: path]
        }
        restartOnly("listen", \.listen)
        restartOnly("state_dir", \.paths.stateDirectory)
        restartOnly("control_socket", \.paths.controlSocket)
        restartOnly("threads", \.eventLoops)
        restartOnly("metrics_listen", \.metricsListen)
        restartOnly("catalog", \.catalogPath)
        restartOnly("doh_endpoints", \.dohEndpointsPath)

        // The one step that can fail (a database write) goes first, so a failure leaves all as it was.
        // Always compared with the engine's state, not the last file: a held-back change or a
        // `profile add` edit of a file-defined profile is settled by the file at every reload.
        do {
            let outcome = try await live.engine.applyConfiguredProfiles(default: next.defaultProfile, profiles: next.profiles)
            report.heldBack = outcome.heldBack
            if !outcome.changed.isEmpty { report.applied.append("profiles") }
        } catch {
            return refuse("the profiles could not be saved (\(error))", report: &report)
        }
        if old.listSources != next.listSources || old.listRefreshPeriod != next.listRefreshPeriod {
            await live.lists.setConfiguredSources(
                next.listSources, refreshPeriod: next.listRefreshPeriod, definedIn: next.paths.configFile)
            if old.listSources != next.listSources { report.applied.append("lists") }
            if old.listRefreshPeriod != next.listRefreshPeriod { report.applied.append("list_refresh_period") }
        }
        if old.upstreams != next.upstreams || old.forwarder != next.forwarder {
            // Validated above, so every address resolves.
            if let upstreams = try? next.upstreams.map({ try $0.socketAddress() }) {
                live.forwarder.replace(with: Self.forwarderConfiguration(next, upstreams: upstreams))
            }
            if old.upstreams != next.upstreams { report.applied.append("upstreams") }
            if old.forwarder != next.forwarder { report.applied.append("upstream_timeout") }
        }
        if old.blockingMode != next.blockingMode || old.blockedTTL != next.blockedTTL {
            live.blocking.replace(with: BlockingSettings(mode: next.blockingMode, blockedTTL: next.blockedTTL))
            if old.blockingMode != next.blockingMode { report.applied.append("mode") }
            if old.blockedTTL != next.blockedTTL { report.applied.append("blocked_ttl") }
        }
        if old.cache != next.cache {
            live.cache.reconfigure(next.cache)
            report.applied.append("cache")
        }
        if old.rateLimit != next.rateLimit {
            live.rateLimiter.replace(with: next.rateLimit)
            report.applied.append("rate_limit")
        }
        if old.logLevel != next.logLevel {
            live.logLevel.set(next.logLevel)
            report.applied.append("log_level")
        }
        current = kept
        log(report)
        return report
    }

    private func refuse(_ reason: String, report: inout ReloadReport) -> ReloadReport {
        report.failure = reason
        logger.error("configuration not reloaded, the previous one stays in force: \(reason); fix \(current.paths.configFile) and reload again")
        return report
    }

    private func log(_ report: ReloadReport) {
        var parts: [String] = []
        parts.append(report.applied.isEmpty ? "nothing changed" : "changed \(report.applied.joined(separator: ", "))")
        if !report.needsRestart.isEmpty {
            parts.append("\(report.needsRestart.joined(separator: ", ")) take effect at the next restart (old values kept)")
        }
        if !report.heldBack.isEmpty { parts.append("held back: \(report.heldBack.joined(separator: " | "))") }
        logger.notice("configuration reloaded: \(parts.joined(separator: "; "))")
    }

    /// Checks every part of `configuration` that a reload would apply, before anything is applied.
    static func validate(_ configuration: HelperConfiguration) throws(ConfigurationRejected) {
        guard !configuration.upstreams.isEmpty else {
            throw ConfigurationRejected("no upstream resolver is configured; name at least one, such as 9.9.9.9")
        }
        for upstream in configuration.upstreams {
            do { _ = try upstream.socketAddress() } catch {
                throw ConfigurationRejected("upstream \(upstream) is not an IP address and port: \(error)")
            }
        }
        guard (1...PolicyDecision.maximumBlockedTTL).contains(configuration.blockedTTL) else {
            throw ConfigurationRejected(
                "blocked TTL \(configuration.blockedTTL) s is outside 1…\(PolicyDecision.maximumBlockedTTL) s (SPEC §9)")
        }
        guard configuration.forwarder.perUpstream > .zero, configuration.forwarder.overall > .zero else {
            throw ConfigurationRejected("upstream timeouts must be longer than 0 s")
        }
        guard configuration.listRefreshPeriod > .zero else {
            throw ConfigurationRejected("the list refresh period must be longer than 0 s")
        }
        do { try ListsController.validate(configuration.listSources) } catch {
            throw ConfigurationRejected(error.error.message)
        }
        do { try HelperEngine.validateConfiguredProfiles(default: configuration.defaultProfile, profiles: configuration.profiles) } catch {
            throw ConfigurationRejected("\(error)")
        }
    }

    static func forwarderConfiguration(_ configuration: HelperConfiguration, upstreams: [SocketAddress]) -> ForwarderConfiguration {
        ForwarderConfiguration(
            upstreams: upstreams, perUpstreamTimeout: configuration.forwarder.perUpstream,
            overallTimeout: configuration.forwarder.overall)
    }
}

extension HelperConfiguration.ForwarderTimeouts: Equatable {
    public static func == (a: Self, b: Self) -> Bool { a.perUpstream == b.perUpstream && a.overall == b.overall }
}
