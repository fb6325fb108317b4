import CThreadShim
import Foundation

/// Runs blocking work (a libcurl transfer, fsync, parsing a large list) on a fresh thread and
/// awaits its result, so the cooperative thread pool of Swift concurrency never blocks on I/O.
enum DedicatedThread {
    static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        // A thread of its own does not see the task's task-locals: the one that says whose work
        // this is goes along.
        let refresh = ListRefreshContext.isRefresh
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                // A refresh's download and file writes yield to any other thread, as its parse and
                // build do (`ListRefreshContext`): a fresh thread per call, so the class ends with it.
                if refresh { _ = scrolloff_set_idle_policy() }
                continuation.resume(returning: ListRefreshContext.$isRefresh.withValue(refresh) { body() })
            }
            thread.name = name
            thread.start()
        }
    }
}

/// Whether the list work the current task starts serves a refresh of lists already in force,
/// which nobody waits for (the copies in force answer meanwhile), rather than something a person
/// asked for and waits on. A refresh's download, file writes, parse and build run under
/// `SCHED_IDLE` (here and in the helper's `LowPriorityWork`, SPEC §9.10), so they never hold a core
/// an event loop wants. Bound around a whole refresh, its publish included, so every
/// step of it inherits the value, on the store's own threads too.
public enum ListRefreshContext {
    @TaskLocal public static var isRefresh = false
}
