import Foundation
import Logging
import ScrollOffCore
import ServiceKit
import ServiceLifecycle

/// Runs the firewall's life (SPEC §9b): the table goes in once the DNS listeners are bound (its
/// redirect needs their ports, which `--listen …:0` only knows then), the DoH names are resolved
/// again with every list refresh (SPEC §9b: the DoH addresses are refreshed with the lists), and the table comes out
/// when the helper stops.
///
/// It sits after the DNS server in the service group, so at a stop (reverse order) the table goes
/// before the listeners close: no moment where DNS is sent to a sinkhole that no longer answers.
/// A helper that ends without being asked to (another service failed) leaves the table in place.
package struct FirewallService: Service {
    let controller: FirewallController
    /// Notified by the DNS server once every listener is bound (the LAN's target may be bound last).
    let listenersBound: ChangeSignal
    /// `ListsController.refreshed`: the list refresh is the one clock the DoH addresses follow,
    /// so there is no timer of the firewall's own (a second schedule that could drift from the
    /// lists' period and could not be driven from outside). A reload resolves them as well
    /// (`ConfigurationReloader`), which covers a helper with no downloaded list.
    let listsRefreshed: ChangeSignal
    /// Makes events of caught attempts (`CaughtBypassAttempts` to the engine's `record`).
    let record: @Sendable ([BypassAttempt], Set<String>) async -> Void
    let logger: Logger

    package init(controller: FirewallController, listenersBound: ChangeSignal, listsRefreshed: ChangeSignal, record: @escaping @Sendable ([BypassAttempt], Set<String>) async -> Void, logger: Logger) {
        self.controller = controller
        self.listenersBound = listenersBound
        self.listsRefreshed = listsRefreshed
        self.record = record
        self.logger = logger
    }

    static let attemptsInterval = Duration.seconds(2)

    package func run() async throws {
        // The wait is a signal, not a polling sleep, and sits inside the graceful-shutdown scope: a
        // SIGTERM before the listeners are up (or a `Task.sleep` whose deadline a faked or set clock
        // moved hours away) must not keep the helper from stopping.
        let listenersBound = self.listenersBound
        let bound: Bool = await cancelWhenGracefulShutdown {
            await listenersBound.wait()
            return !Task.isCancelled
        }
        guard bound else { return }
        // A table that cannot be applied at start is fatal (ARCHITECTURE principle 5): a helper
        // that says it closes the bypasses and does not would be worse than one that does not start.
        do { try await controller.synchronize() } catch {
            throw HelperStartError(error.description)
        }
        let controller = self.controller
        let listsRefreshed = self.listsRefreshed
        let record = self.record
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                // Lookups in a task of their own: a slow upstream must not hold the attempt events
                // back. Refreshes signalled while one resolves are coalesced into one more.
                group.addTask {
                    await controller.refreshAddresses()
                    while !Task.isCancelled {
                        await listsRefreshed.wait()
                        if Task.isCancelled { break }
                        await controller.refreshAddresses()
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        // The attempt sets are read every few seconds, so an event says when it happened.
                        do { try await Task.sleep(for: Self.attemptsInterval) } catch { break }
                        let attempts = await controller.takeAttempts(now: Date())
                        if !attempts.isEmpty { await record(attempts, LocalAddresses.current()) }
                    }
                }
                await group.waitForAll()
            }
        }
        // Only a stop that was asked for (SIGTERM, SIGINT: `systemctl stop`) takes the table away.
        // When the group is torn down because a part of the helper failed, the table stays, as after
        // a crash or a kill -9: DNS fails closed until systemd starts the helper again, instead of
        // every bypass opening while it restarts (docs/firewall.md).
        guard Task.isShuttingDownGracefully else {
            if await controller.isEnabled {
                logger.warning("firewall: the helper is ending without a stop; table inet scrolloff stays (DNS fails closed until it is back)")
            }
            return
        }
        do { try await controller.remove() } catch { logger.error("firewall: the table could not be removed: \(error)") }
    }
}
