import ListFetch
import Logging
import ScrollOffCore
import ServiceLifecycle

/// What the refresh service waits with. The real one sleeps on the monotonic clock until the
/// trusted clock reaches the deadline; tests pass one they advance by hand.
public protocol RefreshTimer: Sendable {
    /// The trusted clock (SPEC §11).
    func now() -> Instant
    /// Returns once `now() >= deadline`; throws when the task is cancelled.
    func sleep(until deadline: Instant) async throws
}

/// Sleeps for the whole remaining time at once (no polling), then checks the trusted clock again,
/// since the wall clock may have been moved while it slept.
public struct SystemRefreshTimer: RefreshTimer {
    let clock: @Sendable () -> Instant

    public init(clock: @escaping @Sendable () -> Instant) { self.clock = clock }

    public func now() -> Instant { clock() }

    public func sleep(until deadline: Instant) async throws {
        while true {
            let remaining = deadline - clock()
            if remaining <= .zero { return }
            try await Task.sleep(for: .milliseconds(remaining.milliseconds))
        }
    }
}

/// Refreshes every downloaded list at the instant its `RefreshPlan` gives (default every 24 h
/// plus a per-list jitter; sooner retries after a failure). It sleeps until the earliest such
/// instant and wakes early when a person adds, updates or removes a list. A failed refresh keeps
/// the last good copy in force; the store records why.
public struct ListRefreshService: Service {
    let lists: ListsController
    let timer: any RefreshTimer
    let logger: Logger

    public init(lists: ListsController, timer: any RefreshTimer, logger: Logger) {
        self.lists = lists
        self.timer = timer
        self.logger = logger
    }

    /// The lists already on disk were put in force when `HelperControl` was built (it publishes
    /// once before returning), so the service starts straight with the first due refresh.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await loop()
        }
    }

    private func loop() async {
        while !Task.isCancelled {
            let next = await lists.refreshDueLists()
            if Task.isCancelled { return }
            if let next {
                logger.debug("next list refresh planned", metadata: ["list.next_ms": "\(next.millisecondsSince1970)"])
            }
            await waitForNextDue(next)
        }
    }

    /// Waits until `next` (if any) or until a list changes, whichever comes first.
    private func waitForNextDue(_ next: Instant?) async {
        let timer = self.timer
        let changes = lists.changes
        await withTaskGroup(of: Void.self) { group in
            if let next {
                group.addTask { try? await timer.sleep(until: next) }
            }
            group.addTask { await changes.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
