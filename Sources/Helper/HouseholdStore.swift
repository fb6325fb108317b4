import Config
import Engine
import Foundation
import Logging
import PostgresStore
import ScrollOffCore
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

    /// Takes this helper's node name in the household for this process, or refuses the start when
    /// another helper (another machine left with the same name) heartbeats it (`claimNode`).
    static func claimNode(_ store: PostgresStateStore, stateDirectory: String) throws(HelperStartError) {
        do throws(NodeClaimError) {
            try store.claimNode(stateDirectory: stateDirectory)
        } catch {
            switch error {
            case .taken: throw HelperStartError("[store] \(error)")
            case .store(let e): throw HelperStartError("[store] the household database: \(e)")
            }
        }
    }

    static let localClock: any TimeSource = SystemTimeSource()

    /// What the engine runs on: the household's clock with a shared store, this machine's otherwise.
    static func timeSource(_ clock: HouseholdTimeSource?) -> any TimeSource {
        if let clock { return clock }
        return localClock
    }

    /// The household's time base (the server's clock), measured once before the engine starts.
    static func clock(for store: PostgresStateStore, logger: Logger) throws(HelperStartError) -> HouseholdTimeSource {
        let clock: HouseholdTimeSource
        do throws(StoreError) {
            clock = try HouseholdTimeSource(local: localClock, store: store)
        } catch {
            throw HelperStartError("[store] the household database: \(error)")
        }
        warnIfSkewed(clock.offsetMilliseconds, logger: logger)
        return clock
    }

    /// Rules do not depend on this machine's clock, but its log (and every other program on it) does.
    static func warnIfSkewed(_ offset: Int64, logger: Logger) {
        guard abs(offset) > 2_000 else { return }
        logger.warning("this machine's clock differs from the household database's; rules use the database's clock; set up NTP on both",
                       metadata: ["clock.offset_ms": "\(offset)"])
    }
}

/// Reloads the engine's state when another helper commits (notification or the once-a-second
/// version check) and after the database comes back, and reports this node every few seconds
/// (`doctor` lists the nodes seen and their clock offsets).
struct HouseholdSyncService: Service {
    let store: PostgresStateStore
    let clock: HouseholdTimeSource
    let engine: HelperEngine
    let logger: Logger

    func run() async throws {
        let listener = PostgresListener(store: store, logger: logger)
        let engine = self.engine
        let clock = self.clock
        let logger = self.logger
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await listener.run { _ in await engine.reloadFromStore() }
                }
                group.addTask {
                    while !Task.isCancelled {
                        // The offset again (a clock that drifts or is set), and this node seen, for `doctor`.
                        if let offset = try? clock.measure() { HouseholdStore.warnIfSkewed(offset, logger: logger) }
                        try? await Task.sleep(for: .seconds(5))
                    }
                }
                await group.waitForAll()
            }
        }
    }
}
