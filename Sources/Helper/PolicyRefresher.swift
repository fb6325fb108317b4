import Logging
import ScrollOffCore
import ServiceLifecycle
import Sinkhole

/// Rebuilds the decision snapshot at its `validUntil` (the next window edge or grant end of any
/// entry), so blocking starts and ends on time (SPEC §9). Wakes at least once a minute so that a
/// clock change is noticed.
struct PolicyRefresher: Service {
    let loader: PolicyLoader
    let store: PolicyStore
    let logger: Logger
    static let longestSleepMilliseconds: Int64 = 60_000

    func run() async {
        // Shutdown cancels the sleep; that ends the loop normally, not as an error of the group.
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                var wait = Self.longestSleepMilliseconds
                if let policy = store.policy as? SnapshotPolicy, let edge = policy.snapshot.validUntil {
                    wait = min(wait, max((edge - loader.clock()).milliseconds, 0) + 1)
                }
                guard (try? await Task.sleep(for: .milliseconds(wait))) != nil else { return }
                if let fresh = loader.refreshed() { store.replace(with: fresh) }
            }
        }
    }
}
