import Config
import ControlServer
import DomainLists
import Enforcement
import Engine
import Firewall
import Foundation
import HostsMode
import HouseholdPage
import Logging
import LowPriority
import NIOCore
import NIOPosix
import ServiceKit
import ServiceLifecycle
import Sinkhole

/// Builds the helper's `ServiceGroup` and runs it until SIGTERM or SIGINT (ARCHITECTURE.md principle 6).
public enum HelperMain {
    /// - Parameters:
    ///   - reloadConfiguration: reads the configuration again on SIGHUP (the file loader); nil =
    ///     the start configuration again.
    ///   - reloads: lets an in-process caller (tests) trigger the same reload without a signal.
    public static func run(
        _ configuration: HelperConfiguration, logger incomingLogger: Logger,
        reloadConfiguration: (@Sendable () throws -> HelperConfiguration)? = nil, reloads: ReloadHandle? = nil
    ) async throws {
        // A SIGHUP (`systemctl reload`, logrotate) that arrives before ReloadService traps it
        // would otherwise kill the helper: ignored from here, trapped once ReloadService runs.
        signal(SIGHUP, SIG_IGN)
        // The level can change at a reload, so every service logs through one live level. At start
        // the more verbose of the process's (`--log-level`) and the configuration's wins.
        let logLevel = LiveLogLevel(min(incomingLogger.logLevel, configuration.logLevel))
        let logger = logLevel.logger(over: incomingLogger)
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.paths.stateDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw HelperStartError(
                "cannot create the state folder \(configuration.paths.stateDirectory): \(error.localizedDescription); "
                    + "choose another with --state-dir")
        }
        // Before anything is opened or bound (SPEC §11): folders that others can write are
        // refused, and one helper per state folder, so a second one stops here having touched
        // neither the database nor a port.
        do {
            try FolderTrust.check(configuration.paths.stateDirectory, role: .state)
            try FolderTrust.checkExisting(
                (configuration.paths.controlSocket as NSString).deletingLastPathComponent, role: .controlSocket)
        } catch { throw HelperStartError(error.description) }
        let stateLock: StateFolderLock
        do { stateLock = try StateFolderLock.acquire(stateDirectory: configuration.paths.stateDirectory) } catch {
            throw HelperStartError(error.description)
        }
        defer { stateLock.release() }
        // The same checks a reload and `check-config` make, once, before anything is built: what
        // they work out (the upstreams' socket addresses) is what the forwarder gets.
        let validated: ValidatedConfiguration
        do { validated = try ConfigurationReloader.validate(configuration) } catch { throw HelperStartError(error.description) }
        // The connection limits, lowered if the descriptor limit cannot hold them.
        let shares = try DescriptorBudget.apply(configuration, logger: logger)
        // Type=notify under systemd (etc/systemd/scrolloff-dns.service); a no-op otherwise.
        let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment, logger: logger)
        notifier.status("starting: opening the database and the lists")
        logger.info(
            "scrolloff-dns starting",
            metadata: [
                "state.dir": "\(configuration.paths.stateDirectory)",
                "upstreams": "\(configuration.upstreams.map(\.description).joined(separator: ","))",
                "mode": "\(configuration.blockingMode.rawValue)",
                "enforcement": "\(configuration.enforcementMode.rawValue)",
            ])

        // The rules, the wallet and the timers (SPEC §2–8): the one owner of state (SQLite).
        let catalogFolder: String
        do {
            catalogFolder = try CatalogLocation.find(
                explicit: configuration.catalogPath, environment: ProcessInfo.processInfo.environment,
                executablePath: CatalogLocation.currentExecutablePath())
        } catch { throw HelperStartError(error.description) }
        let engine: HelperEngine
        // `[store] backend = "postgresql"`: the household's shared database (docs/operations.md).
        let sharedStore = configuration.store.backend == .postgresql ? try HouseholdStore.open(configuration.store, logger: logger) : nil
        if let sharedStore { try HouseholdStore.claimNode(sharedStore, stateDirectory: configuration.paths.stateDirectory) }
        // With a shared store the rules run on the database server's clock (HouseholdTimeSource).
        let householdClock = try sharedStore.map { (store) throws(HelperStartError) in try HouseholdStore.clock(for: store, logger: logger) }
        do throws(EngineError) {
            let catalog = try EngineConfiguration.loadCatalog(folder: catalogFolder)
            let engineConfiguration = EngineConfiguration(
                stateDirectory: configuration.paths.stateDirectory, catalog: catalog, buildDate: BuildInfo.date,
                defaultTimeZoneID: configuration.defaultProfile.timeZoneID, defaultPreset: configuration.defaultProfile.preset)
            if let sharedStore {
                engine = try await HelperEngine.start(configuration: engineConfiguration, store: sharedStore,
                                                      timeSource: HouseholdStore.timeSource(householdClock), logger: logger)
            } else {
                engine = try await HelperEngine.start(configuration: engineConfiguration, timeSource: SystemTimeSource(), logger: logger)
            }
        } catch { throw HelperStartError("\(error)") }
        // The control socket for the CLI and the list refresh (SPEC §11, §13).
        // The DNS server publishes what it bound here, for `doctor` (SPEC §11).
        let bound = BoundListeners()
        // The blocking answer and its TTL: swappable by a reload, read once per blocked query.
        let blocking = BlockingSettingsStore(BlockingSettings(mode: configuration.blockingMode, blockedTTL: configuration.blockedTTL))
        let doctorUpstreams = DoctorUpstreams() // the forwarder, once made below
        let mode = configuration.enforcementMode
        let hostsStatus = mode.writesHosts ? HostsModeStatus(path: configuration.hostsFile, dnsToo: mode.servesDNS) : nil
        // The nftables table against DNS bypasses (SPEC §9b). Made even when off, so a reload can
        // turn it on; it touches nothing until it is.
        do { try FirewallController.checkInstalled(configuration.firewall) } catch { throw HelperStartError(error.description) }
        let firewall = FirewallController(
            settings: configuration.firewall, stateDirectory: configuration.paths.stateDirectory, listeners: bound,
            catalogFolder: catalogFolder, logger: logger)
        var doctorSources = DoctorSources(listeners: bound, blocking: blocking, upstreams: doctorUpstreams)
        doctorSources.hosts = hostsStatus
        doctorSources.firewall = firewall
        // One authorizer for the control socket and the household page's owners (SPEC §11).
        let authorizer = GroupMembershipAuthorizer()
        let control = await HelperControl(
            paths: configuration.paths, version: BuildInfo.version, engine: engine, authorizer: authorizer,
            doctor: doctorSources,
            controlLimits: shares.control, logger: logger)

        // DNS answers come from one immutable policy, replaced whenever the engine publishes new
        // enforcement; neither the CLI nor the control socket sits on this path.
        let policies = PolicyStore(AllowAllPolicy()) // replaced below, before any listener opens
        let composer = PolicyComposer(target: policies, urges: engine.urges, wakeTarget: engine.wakeTarget)
        // Hosts mode (SPEC §10) follows the same published enforcement as the DNS answers.
        var parts: Set<ReadinessGate.Part> = [.control]
        if mode.servesDNS { parts.insert(.dns) }
        if mode.writesHosts { parts.insert(.hosts) }
        if configuration.metricsListen != nil { parts.insert(.metrics) }
        // READY=1 only once every part this mode opens is up: DNS, the control socket, the metrics
        // listener (if on), the first check of the hosts file (hosts mode).
        let readiness = ReadinessGate(waitingFor: parts, onOpen: { status in notifier.ready(status: status) })
        let hostsService = hostsStatus.map { status in
            HostsModeService(path: configuration.hostsFile, status: status, logger: logger,
                             recordEdit: { edit in await engine.record(HostsEditEvent(edit)) }, firstAttempt: {
                readiness.bound(.hosts, status: mode.servesDNS ? nil : "keeping the scrolloff section of \(configuration.hostsFile)")
            })
        }
        await engine.setPublishHandler { enforcement in
            composer.enforcementPublished(enforcement)
            hostsService?.published(enforcement)
        }
        // Known DoH endpoints (SPEC §9, optional): parsed and matched like any other list.
        var doh: DomainMatcher?
        if let path = configuration.dohEndpointsPath {
            do {
                var builder = MatcherBuilder()
                builder.add(try ListParser.parse(contentsOfFile: path).rules, entry: 0)
                doh = builder.build()
            } catch {
                throw HelperStartError("cannot load the DNS-over-HTTPS list \(path): \(error); fix it or leave block_encrypted_dns off")
            }
        }
        let forwarder = Forwarder(
            configuration: ConfigurationReloader.forwarderConfiguration(
                configuration, upstreams: validated.upstreamAddresses, maximumTCPExchanges: shares.upstreamTCP),
            logger: logger)
        doctorUpstreams.follow(forwarder)
        // Everything a reload may change lives in a swappable holder the chain reads per query.
        let cache = AnswerCache(configuration: configuration.cache)
        let rateLimiter = ClientRateLimiter(configuration.rateLimit)
        let chain = ResolverChain.standard(
            policies: policies, canaries: CanaryLink(dohEndpoints: doh, blocking: blocking), blocking: blocking,
            rateLimiter: rateLimiter, cache: cache, forwarder: forwarder)
        let reloader = ConfigurationReloader(
            start: configuration, source: reloadConfiguration ?? { configuration },
            live: LiveSettings(forwarder: forwarder, blocking: blocking, cache: cache, rateLimiter: rateLimiter,
                               lists: control.lists, engine: engine, logLevel: logLevel, firewall: firewall,
                               upstreamTCP: shares.upstreamTCP),
            logger: logger)
        // The file's profiles and list sources apply at every start, before any listener opens.
        do { try await reloader.applyAtStart() } catch { throw HelperStartError(error.description) }
        reloads?.attach(reloader)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.eventLoops)
        await EventLoopScheduling.prepare(group, logger: logger)
        // The forwarder's configuration already holds the firewall's mark (when it is on), so the
        // pooled sockets opened here carry it from the start; a reload re-marks them in place.
        if mode.servesDNS { await forwarder.openSockets(on: group) }
        // The DoH names are resolved through the forwarder on one of its loops, whose pooled
        // sockets are open already (a loop of its own would bind a pool of its own).
        let firewallLoop = group.next()
        await firewall.resolve(through: { name in
            await FirewallController.addresses(of: name, through: forwarder, on: firewallLoop)
        })
        let announce: @Sendable (String) -> Void = { line in
            // Scripts and tests read the bound port from here (SPEC §13); write it at once.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        // Queries are counted only when the metrics endpoint is on (off by default).
        let counters = configuration.metricsListen == nil ? nil : QueryCounters()
        var serverConfiguration = DNSServerConfiguration(listen: configuration.listen, tcp: shares.tcp)
        serverConfiguration.counters = counters
        // The UDP listeners' threads answer most queries: they get the loops' short slice too.
        serverConfiguration.prepareListenerThread = { _ = EventLoopScheduling.requestShortSlice() }
        // The firewall's redirect needs the listeners' ports, which `--listen …:0` only knows once bound.
        let listenersBound = ChangeSignal()
        let server = DNSServer(
            configuration: serverConfiguration, chain: chain, group: group, logger: logger, announce: announce,
            ready: { addresses in
                readiness.bound(.dns, status: "answering DNS on \(addresses.map(\.description).joined(separator: ", "))")
                listenersBound.notify()
            }, bound: bound)
        let reload = ReloadService(
            logger: logger, reloader: reloader, notifier: notifier,
            readiness: readiness)
        var helperServices: [any Service] = [engine]
        if let sharedStore, let householdClock {
            helperServices.append(HouseholdSyncService(store: sharedStore, clock: householdClock, engine: engine, logger: logger))
        }
        // In hosts mode nothing listens for DNS: the machine keeps its own resolver.
        if mode.servesDNS {
            helperServices += [server, MemoryTrimService()]
            // After the server: at shutdown (reverse order) the table goes before the listeners do.
            helperServices.append(FirewallService(
                controller: firewall, listenersBound: listenersBound,
                listsRefreshed: control.lists.refreshed,
                record: { attempts, local in await engine.record(CaughtBypassAttempts(attempts, localAddresses: local)) }, logger: logger))
        }
        if let hostsService { helperServices.append(hostsService) }
        helperServices += [reload, ReportingControlServer(server: control.server, readiness: readiness), control.refresh]
        helperServices.append(control.notifyHook)
        // SIGUSR2: glibc's heap statistics to standard error (debugging memory; idle otherwise).
        helperServices.append(AllocatorReportService())
        if let listen = configuration.metricsListen, let counters {
            var sources = MetricsSources(counters: counters, forwarder: forwarder, cache: cache, lists: control.lists, engine: engine)
            sources.firewall = firewall
            sources.sharedStore = sharedStore
            helperServices.append(MetricsServer(
                listen: listen, sources: sources, exposition: MetricsExposition(version: BuildInfo.version), group: group,
                logger: logger, announce: announce, whenBound: { readiness.bound(.metrics) }))
        }
        // The household page (SPEC §9a): the same engine and authorizer as the control socket.
        // One page on every address `[web] listen` names: the same sessions and sign-in waits,
        // and one connection budget shared by its listeners.
        if !configuration.webListenAddresses.isEmpty {
            let web = HouseholdWeb(
                engine: engine, authorizer: authorizer,
                passwords: OwnerPasswords(stateDirectory: configuration.paths.stateDirectory, shared: sharedStore),
                signIns: SignInBackoff(policy: .init(maximumDelay: .milliseconds(configuration.web.signInMaximumDelay.milliseconds)), shared: sharedStore),
                sessions: sharedStore, logger: logger)
            let neighbours = engine.neighbours
            let limit = WebConnectionLimit(perClient: shares.webConnectionsPerClient, total: shares.webConnections,
                                           macOf: { neighbours.mac(for: $0) })
            for listen in configuration.webListenAddresses {
                helperServices.append(HouseholdWebService(
                    listen: listen, required: configuration.webListenRequired, web: web, group: group, logger: logger, announce: announce,
                    limit: limit, requestTimeout: configuration.web.requestTimeoutAmount))
            }
        }
        // Last, so graceful shutdown (which runs in reverse order) tells systemd first.
        helperServices.append(SystemdStoppingService(notifier: notifier))
        let services = ServiceGroup(
            configuration: .init(
                services: helperServices.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        do {
            try await services.run()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try? await group.shutdownGracefully()
        logger.info("scrolloff-dns stopped")
    }
}
