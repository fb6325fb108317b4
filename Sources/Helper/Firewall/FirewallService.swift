import Foundation
import Logging
import ScrollOffCore
import ServiceLifecycle

/// Runs the firewall's life (SPEC §9b): the table goes in once the DNS listeners are bound (its
/// redirect needs their ports, which `--listen …:0` only knows then), the DoH names are resolved
/// again every list refresh period, and the table comes out when the helper stops.
///
/// It sits after the DNS server in the service group, so at shutdown (reverse order) the table goes
/// before the listeners close: no moment where DNS is sent to a sinkhole that no longer answers.
struct FirewallService: Service {
    let controller: FirewallController
    /// Notified by the DNS server once every listener is bound (the LAN's target may be bound last).
    let listenersBound: ChangeSignal
    /// The list refresh period in force (a reload may change it).
    let refreshPeriod: @Sendable () async -> Span
    /// Makes events of caught attempts (the engine's `recordBypassAttempts`).
    let record: @Sendable ([BypassAttempt], Set<String>) async -> Void
    let logger: Logger

    static let attemptsInterval = Duration.seconds(2)

    func run() async throws {
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
        let refreshPeriod = self.refreshPeriod
        let record = self.record
        await cancelWhenGracefulShutdown {
            await controller.refreshAddresses()
            var lastRefresh = ContinuousClock.now
            while !Task.isCancelled {
                // The attempt sets are read every few seconds, so an event says when it happened.
                do { try await Task.sleep(for: Self.attemptsInterval) } catch { break }
                let attempts = await controller.takeAttempts(now: Date())
                if !attempts.isEmpty { await record(attempts, LocalAddresses.current()) }
                let period = await refreshPeriod()
                if ContinuousClock.now - lastRefresh >= .milliseconds(period.milliseconds) {
                    lastRefresh = .now
                    await controller.refreshAddresses()
                }
            }
        }
        do { try await controller.remove() } catch { logger.error("firewall: the table could not be removed: \(error)") }
    }
}
