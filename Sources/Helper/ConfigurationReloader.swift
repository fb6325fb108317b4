import Config
import ControlServer
import Enforcement
import Engine
import Firewall
import Logging
import NIOCore
import ScrollOffCore
import ServiceKit
import Sinkhole
import Store

/// What one reload did: for its one log line and for tests.
public struct ReloadReport: Sendable, Equatable {
    /// Settings that changed and are in force now (configuration file keys).
    public var applied: [String] = []
    /// Settings that changed but only take effect at the next restart; their old values stay.
    public var needsRestart: [String] = []
    /// Changes kept back while a lock is in force, each with when it ends: profile changes
    /// (`HelperEngine.applyConfiguredProfiles`) and list URLs (`ListsController.setConfiguredSources`).
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
    /// The nftables table (SPEC §9b); nil in tests that build no firewall.
    public var firewall: FirewallController? = nil
    /// Questions over TCP to upstreams at once, as fitted to the descriptor limit at start (`DescriptorBudget`).
    public var upstreamTCP = DescriptorBudget.upstreamTCP
}


/// Takes a new configuration on SIGHUP (SPEC §13; ARCHITECTURE principle 5 "on reload keep the old
/// config and report"): reads it, validates every part before touching anything, then applies
/// what can change while running and reports the rest as waiting for a restart.
///
/// Reloads run one at a time, in the order they were asked for (SIGHUP and `ReloadHandle` alike):
/// an actor alone would not ensure it, since a reload suspends while the engine and the lists
/// apply their parts, and a second reload entering then could apply an older file after a newer
/// one. So each reload first waits for the one before it (`last`).
public actor ConfigurationReloader {
    private var current: HelperConfiguration
    /// The latest reload asked for; the next one waits for it to finish.
    private var last: Task<ReloadReport, Never>?
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
    /// every start, not only at first setup. Fatal (ARCHITECTURE principle 5) when the database
    /// refuses the write, and when a list source new to this start comes from a host an entry
    /// blocks (SPEC §1): the helper then does not start, and the error names the
    /// `lists.source[N].url` key, the host and the entry, as for any other bad file. Serving on
    /// without the source instead would leave the file saying one thing and the helper doing another.
    /// Lists the rules hold keep their URL (held back, logged), as at a reload.
    func applyAtStart() async throws(ConfigurationRejected) {
        // `HelperMain` validated `start` before building the parts this applies to.
        let start = current
        try await live.lists.checkConfiguredHosts(start.listSources)
        do {
            let report = try await live.engine.applyConfiguredProfiles(default: start.defaultProfile, profiles: start.profiles, allowances: start.allowances)
            for held in report.heldBack { logger.warning("configuration: \(held)") }
            if let held = await live.engine.setUnknownDevices(start.unknownDevices) { logger.warning("configuration: \(held)") }
            await live.engine.setDigestHook(start.digestHook)
            await live.engine.setNotifyHook(start.notifyHook)
            // Said once at start: which profile wins where clients overlap.
            for line in ClientOverlaps.describe(await live.engine.profileList()) { logger.notice("profiles overlap: \(line)") }
        } catch { throw ConfigurationRejected("the configured profiles could not be saved: \(error)") }
        await live.lists.setSourceRules(start.listSourceRules)
        await live.lists.setBound(start.listBound)
        let lists = await live.lists.setConfiguredSources(
            start.listSources, refreshPeriod: start.listRefreshPeriod, definedIn: start.paths.configFile)
        for held in lists.heldBack { logger.warning("configuration: \(held)") }
    }

    /// Reads the configuration again and applies it (SIGHUP). Never throws: a bad file is logged in
    /// one line saying what to fix, and everything stays as it was.
    @discardableResult
    public func reload() async -> ReloadReport {
        // No suspension between reading `last` and replacing it, so every reload queues behind
        // exactly the one asked for before it.
        let previous = last
        let task = Task {
            _ = await previous?.value
            return await self.reloadNow()
        }
        last = task
        return await task.value
    }

    // Not optimized: Swift 6.3.1's release build crashes splitting this coroutine
    // (signal 11 in LLVM's CoroSplit, `emitSetAndGetSwiftErrorValueAround`), which stopped
    // `make release`; a reload is rare and gains nothing from optimization.
    @_optimize(none)
    private func reloadNow() async -> ReloadReport {
        var report = ReloadReport()
        let validated: ValidatedConfiguration
        do {
            validated = try Self.validate(try source())
        } catch {
            return refuse("\(error)", report: &report)
        }
        let next = validated.configuration
        // A list URL's host is allowed at once (SPEC §1): refused whole, before anything applies.
        do { try await live.lists.checkConfiguredHosts(next.listSources) } catch {
            return refuse(error.description, report: &report)
        }

        let old = current
        var kept = next
        // Settings bound to sockets, threads and folders opened at start (declared `.restart` in
        // Config's keys): reported, old value kept. By name, so the log line reads the same whatever
        // order the tables are declared in.
        for part in ConfigurationKeys.reloadParts.sorted(by: { $0.name < $1.name }) where part.timing == .needsRestart {
            guard let field = part.field, field.differs(old, next) else { continue }
            report.needsRestart.append(part.name)
            field.keep(&kept, from: old)
        }
        /// A part applied below: its name as the declarations give it.
        func applied(_ setting: Setting) { report.applied.append(setting.reload.name) }

        // The one step that can fail (a database write) goes first, so a failure leaves all as it was.
        // Always compared with the engine's state, not the last file: a held-back change or a
        // `profile add` edit of a file-defined profile is settled by the file at every reload.
        do {
            let outcome = try await live.engine.applyConfiguredProfiles(default: next.defaultProfile, profiles: next.profiles,
                                                                        allowances: next.allowances)
            report.heldBack = outcome.heldBack
            if !outcome.changed.isEmpty { applied(ProfileKeys.timeZone) }
            if !outcome.allowances.isEmpty { applied(AllowanceKeys.amount) }
            if let held = await live.engine.setUnknownDevices(next.unknownDevices) { report.heldBack.append(held) }
            if await live.engine.digestHook != next.digestHook {
                await live.engine.setDigestHook(next.digestHook)
                applied(DigestKeys.command)
            }
            if await live.engine.notifyHook != next.notifyHook {
                await live.engine.setNotifyHook(next.notifyHook)
                applied(NotifyKeys.command)
            }
        } catch {
            return refuse("the profiles could not be saved (\(error))", report: &report)
        }
        // Every reload, not only when the file changed: a URL held back while a rule holds its list
        // is compared with the store again, and applies once the rule lets the list's names open.
        let lists = await live.lists.setConfiguredSources(
            next.listSources, refreshPeriod: next.listRefreshPeriod, definedIn: next.paths.configFile)
        if lists.changed { applied(ListKeys.sourceURL) }
        report.heldBack += lists.heldBack
        if ListKeys.refreshPeriod.reload.changed(old, next) { applied(ListKeys.refreshPeriod) }
        if ListKeys.memberFileFolders.reload.changed(old, next) {
            await live.lists.setSourceRules(next.listSourceRules)
            applied(ListKeys.memberFileFolders)
        }
        if ListKeys.maxNames.reload.changed(old, next) {
            await live.lists.setBound(next.listBound)
            applied(ListKeys.maxNames)
        }
        // The firewall first among the live parts: it is the other step that can fail (nft
        // refusing the table), and a refusal then leaves the old table and everything else as it was.
        if old.firewall != next.firewall, let firewall = live.firewall {
            do { try await firewall.update(next.firewall) } catch {
                return refuse(error.description, report: &report)
            }
            applied(FirewallKeys.enabled)
        } else if next.firewall.enabled, let firewall = live.firewall {
            // The same settings, but the table may have been deleted by hand: a reload puts it
            // back (what `doctor` tells the administrator to do).
            do {
                if try await firewall.restoreIfMissing() { applied(FirewallKeys.enabled) }
            } catch {
                return refuse(error.description, report: &report)
            }
        }
        if old.upstreams != next.upstreams || old.forwarder != next.forwarder || old.firewall.mark(if: old.firewall.enabled) != next.firewall.mark(if: next.firewall.enabled) {
            // The addresses validation resolved: nothing left here can fail after changes began.
            live.forwarder.replace(with: Self.forwarderConfiguration(next, upstreams: validated.upstreamAddresses, maximumTCPExchanges: live.upstreamTCP))
            if DNSKeys.upstreams.reload.changed(old, next) { applied(DNSKeys.upstreams) }
            if DNSKeys.upstreamTimeout.reload.changed(old, next) { applied(DNSKeys.upstreamTimeout) }
            if DNSKeys.unwantedReplyThreshold.reload.changed(old, next) { applied(DNSKeys.unwantedReplyThreshold) }
        }
        // The DoH names again at every reload, after the upstreams above are in force (they may
        // answer differently); not awaited, so the reload's answer does not wait for the lookups.
        if next.firewall.enabled, let firewall = live.firewall { Task { await firewall.refreshAddresses() } }
        if old.blockingMode != next.blockingMode || old.blockedTTL != next.blockedTTL {
            live.blocking.replace(with: BlockingSettings(mode: next.blockingMode, blockedTTL: next.blockedTTL))
            if DNSKeys.blockingMode.reload.changed(old, next) { applied(DNSKeys.blockingMode) }
            if DNSKeys.blockedTTL.reload.changed(old, next) { applied(DNSKeys.blockedTTL) }
        }
        if DNSKeys.cacheSize.reload.changed(old, next) {
            live.cache.reconfigure(next.cache)
            applied(DNSKeys.cacheSize)
        }
        if DNSKeys.rateLimit.reload.changed(old, next) {
            live.rateLimiter.replace(with: next.rateLimit)
            applied(DNSKeys.rateLimit)
        }
        if HelperKeys.logLevel.reload.changed(old, next) {
            live.logLevel.set(next.logLevel)
            applied(HelperKeys.logLevel)
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

    static func forwarderConfiguration(
        _ configuration: HelperConfiguration, upstreams: [SocketAddress], maximumTCPExchanges: Int = DescriptorBudget.upstreamTCP
    ) -> ForwarderConfiguration {
        ForwarderConfiguration(
            upstreams: upstreams, perUpstreamTimeout: configuration.forwarder.perUpstream,
            overallTimeout: configuration.forwarder.overall, maximumTCPExchanges: maximumTCPExchanges,
            unwantedReplyThreshold: configuration.forwarder.unwantedReplyThreshold,
            socketMark: configuration.firewall.mark(if: configuration.firewall.enabled))
    }
}

extension HelperConfiguration.ForwarderTimeouts: Equatable {
    public static func == (a: Self, b: Self) -> Bool { a.perUpstream == b.perUpstream && a.overall == b.overall && a.unwantedReplyThreshold == b.unwantedReplyThreshold }
}
