#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the heavy list work (parsing a list copy, building the matcher) on a thread of its own at
/// nice 10, and waits for it.
///
/// Why: a list refresh costs seconds of CPU (4 s for a 1,000,000-name list), and on a router or a
/// helper pinned to one core that CPU is the event loops' too. At the same priority the scheduler
/// shares the core evenly, so answers waited behind the build: p99 at 20,000 QPS went from 0.2 ms
/// to 4.3 ms during a refresh (bench/dns.sh, issue 15 "a refresh never stalls answers"). At nice
/// 10 the build weighs about a tenth of an event loop, which preempts it as soon as a query
/// arrives; on an idle machine it runs as fast as before. Not `SCHED_IDLE`: a flood of queries
/// would then hold back a rule change for as long as it lasted, and an unprivileged thread can
/// never leave that class again.
///
/// A new thread for each call, joined before the call returns, not a pool: a call costs tens of
/// microseconds against a build of milliseconds to seconds; the nice value stays with a thread for
/// good (lowering it back needs CAP_SYS_NICE, which the unit does not have), so no thread of a
/// shared pool may take it; and a joined thread has finished with everything it touched when the
/// caller goes on. Calls made from the work itself (a parse inside a build) run in place; if no
/// thread can be made (the task limit), the work runs in place at the caller's priority.
enum LowPriorityWork {
    static let niceness: Int32 = 10

    /// `body`'s result, computed on a nice-10 thread while the caller waits.
    static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if pthread_getspecific(workerKey) != nil { return try body() }
        return try withoutActuallyEscaping(body) { (escapable: @escaping () throws(E) -> T) throws(E) -> T in
            let job = Job(escapable)
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            // The parsers' and builders' own recursion is shallow; 8 MiB is the main thread's default.
            pthread_attr_setstacksize(&attributes, 8 << 20)
            let context = Unmanaged.passRetained(job as AnyJob).toOpaque()
            var thread = pthread_t()
            let created = pthread_create(&thread, &attributes, { raw in
                let job = Unmanaged<AnyJob>.fromOpaque(raw!).takeRetainedValue()
                job.performAtLowPriority()
                return nil
            }, context)
            if created == 0 {
                pthread_join(thread, nil)
            } else {
                Unmanaged<AnyJob>.fromOpaque(context).release()
                job.perform()
            }
            return try job.result!.get()
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
        func perform() {}

        final func performAtLowPriority() {
            // Linux keeps the nice value per thread (setpriority(2) NOTES): this one only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, LowPriorityWork.niceness)
            // Its own name, so `top -H` and `perf sched` tell list work from the Swift pool's threads.
            EventLoopScheduling.nameThread("scrolloff-lists")
            pthread_setspecific(LowPriorityWork.workerKey, UnsafeRawPointer(bitPattern: 1))
            perform()
        }
    }

    /// One call: its closure and, once the thread is joined, its result.
    private final class Job<T, E: Error>: AnyJob {
        /// Dropped as soon as it has run: `withoutActuallyEscaping` checks, when the caller
        /// returns, that nothing holds the closure any more.
        private var body: (() throws(E) -> T)?
        var result: Result<T, E>?

        init(_ body: @escaping () throws(E) -> T) { self.body = body }

        override func perform() {
            let work = body!
            body = nil
            do throws(E) { result = .success(try work()) } catch { result = .failure(error) }
        }
    }

    /// The nice value of the calling thread (for tests).
    static func currentNiceness() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }
}
