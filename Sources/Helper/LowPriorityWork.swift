import Foundation

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
/// arrives; on an idle machine it runs as fast as before.
///
/// A new thread for each call, not a pool: a call costs tens of microseconds against a build of
/// milliseconds to seconds, and the nice value stays with a thread for good (lowering it back
/// needs CAP_SYS_NICE, which the unit does not have), so a thread of the shared pool must not
/// take it. Calls from that thread (a parse inside a build) run in place.
enum LowPriorityWork {
    static let niceness: Int32 = 10
    /// The worker threads' name (at most 15 octets: Linux keeps no more, pthread_setname_np(3)).
    static let threadName = "scrolloff-lists"
    /// Marks a worker thread, for calls made from it (the name alone could be anyone's).
    private static let marker = "scrolloff.lowPriorityWork"

    /// `body`'s result, computed on a nice-10 thread while the caller waits.
    static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if Thread.current.threadDictionary[marker] != nil { return try body() }
        return try withoutActuallyEscaping(body) { (escapable: @escaping () throws(E) -> T) throws(E) -> T in
            let job = Job(escapable)
            let thread = Thread { job.perform() }
            thread.name = threadName
            // The parsers' and builders' own recursion is shallow; 8 MiB is the main thread's default.
            thread.stackSize = 8 << 20
            thread.start()
            job.done.wait()
            return try job.result!.get()
        }
    }

    /// One call: its closure and its result, handed between the caller and the worker thread,
    /// which the semaphore orders (the caller reads the result only after the worker signals).
    private final class Job<T, E: Error>: @unchecked Sendable {
        /// Dropped before `done` is signalled: `withoutActuallyEscaping` checks, when the caller
        /// returns, that nothing holds the closure any more (the thread may still hold the job).
        private var body: (() throws(E) -> T)?
        var result: Result<T, E>?
        let done = DispatchSemaphore(value: 0)

        init(_ body: @escaping () throws(E) -> T) { self.body = body }

        func perform() {
            // Linux keeps the nice value per thread (setpriority(2) NOTES): this one only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, LowPriorityWork.niceness)
            Thread.current.threadDictionary[LowPriorityWork.marker] = true
            result = compute()
            done.signal()
        }

        private func compute() -> Result<T, E> {
            let work = body!
            body = nil
            do throws(E) { return .success(try work()) } catch { return .failure(error) }
        }
    }

    /// The nice value of the calling thread (for tests).
    static func currentNiceness() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }
}
