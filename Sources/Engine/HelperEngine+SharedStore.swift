import Foundation
import ScrollOffCore
import Store

/// Several helpers on one shared store (`[store] backend = "postgresql"`, docs/operations.md).
///
/// The store refuses a commit decided on a state older than its last commit
/// (`StoreError.staleSnapshot`); the engine then reloads the state the other node left and runs
/// the command again on it, so a spend, peek or token is decided once on the household's state,
/// whichever helper is asked (SPEC §4 and §5 hold across helpers). When another helper commits,
/// this one reloads (`reloadFromStore`, called by the store's listener) and republishes its DNS
/// snapshot; DNS never waits for the database, it answers from the snapshot in force.
extension HelperEngine {
    /// How many times a command is decided again after another helper committed first.
    static let staleRetries = 3

    /// Reads the whole state again from the store and puts it in force: after another helper's
    /// commit, or after this one's commit was refused as stale. What only this node knows is kept
    /// per profile (its reminder cursor); protected time is counted from the reload on, so time
    /// another helper already wrote is not written twice.
    /// - Returns: false when the store could not be read (the state in force stays).
    @discardableResult
    package func reloadFromStore() -> Bool {
        let loaded: StoredState
        do { loaded = try store.load() } catch {
            logger.warning("could not reload the household's state; the rules in force stay", metadata: ["error": "\(error)"])
            return false
        }
        let now = advanceClock()
        var runtimes: [ProfileRuntime] = []
        for p in loaded.profiles {
            do {
                var r = try ProfileRuntime.make(p, now: now)
                if let old = profiles.first(where: { $0.name == r.name }) { r.reminderCursor = old.reminderCursor }
                r.protectedSince = r.blockInForce(at: now) ? max(now, r.account.wallet.state.asOf) : nil
                runtimes.append(r)
            } catch {
                logger.error("a profile read from the household's store cannot be used; the rules in force stay",
                             metadata: ["profile": "\(p.settings.name)", "error": "\(error)"])
                return false
            }
        }
        profiles = Self.ordered(runtimes)
        planBook = PlanBook(plans: loaded.plans, alternatives: loaded.alternatives)
        requests = TimeRequests(loaded.timeRequests)
        configuredProfiles.unknownDevices = loaded.settings[ConfiguredProfiles.unknownDevicesKey] ?? configuredProfiles.unknownDevices
        books.dropHeld()
        sharedReloads += 1
        rebuild(now: now)
        wake()
        return true
    }

    /// How many times the state was reloaded from a shared store, for `doctor` and the tests.
    package var reloadCount: Int { sharedReloads }
}
