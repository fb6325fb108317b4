import Config
import Engine
import Foundation
import Logging
import PostgresStore
import ServiceKit
import ServiceLifecycle
import Store

/// `[store] backend = "postgresql"`: opens the household's shared store and keeps this helper in
/// step with the others (docs/operations.md).
package enum HouseholdStore {
    /// Opens the server named by `settings`, reading the password file; a start-up error names what to fix.
    package static func open(_ settings: StoreSettings, logger: Logger) throws(HelperStartError) -> PostgresStateStore {
        var location: PostgresLocation
        do throws(PostgresLocationError) {
            location = try PostgresLocation(parsing: settings.url)
            if !settings.passwordFile.isEmpty { location.password = try PostgresLocation.readPassword(path: settings.passwordFile) }
        } catch {
            throw HelperStartError("[store] \(error.problem); write \(PostgresLocation.example)")
        }
        if !settings.tlsCAFile.isEmpty { location.caFile = settings.tlsCAFile }
        let node = settings.node.isEmpty ? ProcessInfo.processInfo.hostName : settings.node
        do {
            return try PostgresStateStore(location: location, node: node, logger: logger)
        } catch {
            throw HelperStartError("[store] the household database: \(error)")
        }
    }
}

/// Reloads the engine's state when another helper commits (notification or the once-a-second
/// version check) and after the database comes back, and reports this node every few seconds
/// (`doctor` lists the nodes seen and their clock offsets).
struct HouseholdSyncService: Service {
    let store: PostgresStateStore
    let engine: HelperEngine
    let logger: Logger

    func run() async throws {
        let listener = PostgresListener(store: store, logger: logger)
        let engine = self.engine
        let store = self.store
        let logger = self.logger
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await listener.run { _ in await engine.reloadFromStore() }
                }
                group.addTask {
                    while !Task.isCancelled {
                        do {
                            let offset = try store.heartbeat()
                            if abs(offset) > 2_000 {
                                logger.warning("this machine's clock differs from the household database's; rules keep this helper's trusted clock",
                                               metadata: ["clock.offset_ms": "\(offset)"])
                            }
                        } catch {}
                        try? await Task.sleep(for: .seconds(5))
                    }
                }
                await group.waitForAll()
            }
        }
    }
}
