import Foundation
import Logging
import ServiceLifecycle

/// Builds the helper's `ServiceGroup` and runs it until SIGTERM or SIGINT (ARCHITECTURE.md principle 6).
public enum HelperMain {
    public static func run(paths: RuntimePaths, logger: Logger) async throws {
        try FileManager.default.createDirectory(
            atPath: paths.stateDirectory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        logger.info("scrolloff-dns starting", metadata: ["state.dir": "\(paths.stateDirectory)"])
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: IdleService(logger: logger))],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}

/// Keeps the group alive until shutdown. Replaced by the DNS service when it lands.
struct IdleService: Service {
    let logger: Logger
    func run() async throws {
        try await gracefulShutdown()
        logger.info("scrolloff-dns stopping")
    }
}
