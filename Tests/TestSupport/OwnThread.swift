import Foundation

/// Runs blocking work (socket calls, `usleep`) on a thread of its own, so it never holds one of
/// the few cooperative threads a server under test needs (two on a 2-core machine) — and still
/// inside the calling task, so task-locals hold: an `#expect` in `work` is recorded against the
/// running test. A bare `Thread { … }` loses them, and its failed expectations went to no test.
public func onOwnThread<T: Sendable, Failure: Error>(_ work: () throws(Failure) -> T) async throws(Failure) -> T {
    try await withTaskExecutorPreference(OwnThreadExecutor()) { () async throws(Failure) -> T in try work() }
}

/// A task executor that runs each job it is given on a new thread; only for tests, whose blocking
/// bodies are one job each.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread { job.runSynchronously(on: executor) }.start()
    }
}
