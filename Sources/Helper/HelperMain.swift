import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Sinkhole

/// Builds the helper's `ServiceGroup` and runs it until SIGTERM or SIGINT (ARCHITECTURE.md principle 6).
public enum HelperMain {
    public static func run(_ configuration: HelperConfiguration, logger: Logger) async throws {
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.paths.stateDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw HelperStartError(
                "cannot create the state folder \(configuration.paths.stateDirectory): \(error.localizedDescription); "
                    + "choose another with --state-dir")
        }
        guard !configuration.upstreams.isEmpty else {
            throw HelperStartError(
                "no upstream resolver: /etc/resolv.conf names none other than this server; give one with --upstream 9.9.9.9")
        }
        logger.info(
            "scrolloff-dns starting",
            metadata: [
                "state.dir": "\(configuration.paths.stateDirectory)",
                "upstreams": "\(configuration.upstreams.map(\.description).joined(separator: ","))",
                "mode": "\(configuration.blockingMode.rawValue)",
            ])

        let loader = PolicyLoader(
            blocklistPath: configuration.blocklistPath, managedListPath: configuration.managedListPath,
            managedTTLCap: configuration.managedTTLCap, logger: logger)
        let policies = PolicyStore(try loader.load())
        var doh = DomainSuffixSet()
        if let path = configuration.dohEndpointsPath {
            for domain in try PlainDomainList.load(path: path).domains { try doh.insert(domain) }
        }
        let upstreams = try configuration.upstreams.map { try $0.socketAddress() }
        let forwarder = Forwarder(
            configuration: ForwarderConfiguration(
                upstreams: upstreams, perUpstreamTimeout: configuration.forwarder.perUpstream,
                overallTimeout: configuration.forwarder.overall),
            logger: logger)
        let chain = ResolverChain.standard(
            policies: policies, canaries: CanaryLink(dohEndpoints: doh, mode: configuration.blockingMode),
            mode: configuration.blockingMode, cache: AnswerCache(configuration: configuration.cache),
            forwarder: forwarder)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.eventLoops)
        let server = DNSServer(
            configuration: DNSServerConfiguration(listen: configuration.listen), chain: chain, group: group,
            logger: logger,
            announce: { line in
                // Scripts and tests read the bound port from here (SPEC §13); write it at once.
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            })
        let reload = ReloadService(logger: logger) { loader.reload(into: policies) }
        let refresher = PolicyRefresher(loader: loader, store: policies, logger: logger)
        let services = ServiceGroup(
            configuration: .init(
                services: [.init(service: server), .init(service: reload), .init(service: refresher)],
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
