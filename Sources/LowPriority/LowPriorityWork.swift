import CThreadShim
import ListFetch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the heavy list work (parsing a list copy, building the matcher) on a thread of its own at
/// nice 10, or under `SCHED_IDLE` for a list refresh's work, and waits for it: `perform` suspends
/// the calling task (no thread of Swift's pool waits, and an actor that awaits it is free
/// meanwhile); `run` blocks the calling thread, for callers that are not async.
///
/// Why: a list refresh costs seconds of CPU (4 s for a 1,000,000-name list), and on a router or a
/// helper pinned to one core that CPU is the event loops' too. At the same priority the scheduler
/// shared the core evenly, and p99 at 20,000 QPS went from 0.2 ms to 4.3 ms during a refresh
/// (bench/dns.sh, SPEC §9: a list refresh never stalls answers).
///
/// Nice 10 was not enough: under Linux's EEVDF scheduler a running thread keeps the CPU until its
/// slice ends whatever its weight, and the check after that comes at the next timer tick, so
/// `perf sched` showed the event loop runnable and waiting 4.2–5.5 ms behind this thread. A waking
/// ordinary thread preempts a `SCHED_IDLE` one at once, and a `SCHED_IDLE` thread weighs 3 against
/// nice 0's 1024 (the kernel's fair scheduler); in the same kind of capture the loop's longest
/// wait fell to 0.1–0.9 ms. But on cores other threads keep busy a `SCHED_IDLE` thread gets a
/// fraction of a percent of one: a person's `scrolloff block` would wait for the compiler. So the
/// class follows who waits for the work (`ListRefreshContext`):
///
/// - a refresh's download, file writes, parse, held-names diff and matcher build (the timer's due
///   lists, `scrolloff lists update`) run under `SCHED_IDLE`: the copy in force keeps answering
///   meanwhile, so a refresh that waits fails nothing open, and answering comes first. The build
///   runs off the engine actor (`HelperEngine.setLists` awaits `perform`), so a person's block,
///   `status` or a window edge does not wait for it either, however long it waits for idle CPU;
/// - everything else runs at nice 10: what a person asked for (a block, `lists add`, a custom
///   domain, a reload, the first fetch of a list the configuration file names), and the matcher
///   builds the engine still makes in place (a custom domain, a reload's allowed hosts), which hold
///   the engine while they run. For those the event loops' short slice (`EventLoopScheduling`) is
///   what lets a waking loop preempt them.
///
/// An unprivileged thread cannot leave `SCHED_IDLE` or lower its nice value again, one more reason
/// for a thread per call. If the kernel refuses `SCHED_IDLE`, the thread stays at nice 10.
///
/// A new thread for each call, not a pool: a call costs tens of microseconds against a build of
/// milliseconds to seconds, and no thread of a shared pool may keep a lowered priority. `run`
/// joins its thread, so the thread has finished with everything it touched when the caller goes
/// on; `perform`'s thread is detached, drops the work's closure before it resumes the caller and
/// then only exits, releasing its reference to the result on the way (a result the caller has
/// already dropped, such as a superseded matcher, is then freed there, at low priority). Calls made from the work itself (a parse inside a build) run in place; if no
/// thread can be made (the task limit), the work runs in place at the caller's priority.
///
/// ListFetch's `DedicatedThread` is the same shape (a thread per call, a continuation) but not the
/// same thing: it carries the list store's blocking I/O (a download, file writes, fsync) at the
/// caller's priority, not nice 10, and its threads must not count as workers here, or the
/// validator's parse it calls would run in place at that priority instead of at nice 10.
package enum LowPriorityWork {
    static let niceness: Int32 = 10

    /// `body`'s result, computed on a low-priority thread while the caller waits.
    package static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if pthread_getspecific(workerKey) != nil { return try body() }
        let idle = ListRefreshContext.isRefresh
        return try withoutActuallyEscaping(body) { (escapable: @escaping () throws(E) -> T) throws(E) -> T in
            let job = Job(escapable, idle: idle)
            if let thread = start(job, detached: false) {
                pthread_join(thread, nil)
            } else {
                job.perform()
            }
            return try job.result!.get()
        }
    }

    /// `body`'s result, computed on a low-priority thread while the calling task is suspended;
    /// the worker thread resumes it. The class follows the task's `ListRefreshContext`.
    package static func perform<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        if pthread_getspecific(workerKey) != nil { return try body() }
        let idle = ListRefreshContext.isRefresh
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            let job = Job(body, idle: idle) { continuation.resume(returning: $0) }
            if start(job, detached: true) == nil { job.perform() }
        }
        return try result.get()
    }

    /// Starts `job` on a thread of its own, detached or to be joined; nil when no thread can be
    /// made, and then the caller runs the job itself.
    private static func start(_ job: AnyJob, detached: Bool) -> pthread_t? {
        LowPriorityThread.start(name: "scrolloff-lists", idle: job.idle, detached: detached) {
            pthread_setspecific(LowPriorityWork.workerKey, UnsafeRawPointer(bitPattern: 1))
            job.perform()
        }
    }

    /// Marks the worker threads, for calls made from the work itself.
    private static let workerKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// What the thread's C entry point can call without knowing the result's type.
    private class AnyJob {
        /// Whether the thread goes to `SCHED_IDLE` (a refresh's work).
        let idle: Bool

        init(idle: Bool) { self.idle = idle }

        func perform() {}
    }

    /// One call: its closure and, once it has run, its result, kept for `run` or handed to
    /// `perform`'s continuation.
    private final class Job<T, E: Error>: AnyJob {
        /// Dropped as soon as it has run: `withoutActuallyEscaping` checks, when the caller
        /// returns, that nothing holds the closure any more, and `perform`'s caller goes on with
        /// nothing of the work's captures left on the worker.
        private var body: (() throws(E) -> T)?
        private let finish: ((Result<T, E>) -> Void)?
        var result: Result<T, E>?

        init(_ body: @escaping () throws(E) -> T, idle: Bool, finish: ((Result<T, E>) -> Void)? = nil) {
            self.body = body
            self.finish = finish
            super.init(idle: idle)
        }

        override func perform() {
            let outcome = compute()
            if let finish { finish(outcome) } else { result = outcome }
        }

        /// The closure is released when this returns, before `finish` resumes the caller.
        private func compute() -> Result<T, E> {
            let work = body!
            body = nil
            do throws(E) { return .success(try work()) } catch { return .failure(error) }
        }
    }

    /// Whether the calling thread runs under `SCHED_IDLE` (for tests).
    static func currentPolicyIsIdle() -> Bool {
        scrolloff_thread_is_idle_policy() != 0
    }

    /// The nice value of the calling thread (for tests).
    static func currentNiceness() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }
}
