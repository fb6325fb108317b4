import CThreadShim
import DomainLists
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread for background work at a low priority: `LowPriorityWork`'s list threads and
/// `Retirement`'s releaser. The one place such a thread is made, so both get the same priority,
/// class and yield points.
enum LowPriorityThread {
    /// Starts `body` on a new thread (8 MiB of stack) at nice 10, moved to `SCHED_IDLE` when `idle`,
    /// named `name` (the kernel keeps 15 bytes); detached, or to be joined. Nil when no thread can
    /// be made (the task limit): the caller then does the work itself.
    ///
    /// A `SCHED_IDLE` thread also gets `CooperativeYield` points, so an event loop woken on its
    /// core waits for it one yield interval at most. A nice-10 thread does not: what runs there a
    /// person waits for (a block, `lists add`), and under EEVDF a `sched_yield` while another
    /// thread is runnable may cost the caller the rest of its slice (recent kernels charge it
    /// whole), which would stretch that work several times on a busy core; the event loops' short
    /// slice preempts it instead (`EventLoopScheduling`).
    static func start(name: String, idle: Bool, detached: Bool, _ body: @escaping () -> Void) -> pthread_t? {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // The parsers' and builders' own recursion is shallow; 8 MiB is the main thread's default.
        pthread_attr_setstacksize(&attributes, 8 << 20)
        if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
        let context = Unmanaged.passRetained(Start(name: name, idle: idle, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            // Linux keeps the nice value per thread (setpriority(2) NOTES): this one only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, LowPriorityWork.niceness)
            // The scheduling class is per thread too; nice 10 stays if the kernel refuses it, and
            // then so does the whole slice (no yield points).
            if start.idle, scrolloff_set_idle_policy() == 0 { CooperativeYield.enableOnThisThread() }
            // Its own name, so `top -H` and `perf sched` tell this work from the Swift pool's threads.
            _ = scrolloff_name_thread(start.name)
            start.run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            return nil
        }
        return thread
    }

    /// What the thread's C entry point receives. `run` drops the body before it returns, so
    /// nothing the body captured outlives the work on this thread.
    private final class Start {
        let name: String
        let idle: Bool
        private var body: (() -> Void)?

        init(name: String, idle: Bool, body: @escaping () -> Void) {
            self.name = name
            self.idle = idle
            self.body = body
        }

        func run() {
            let work = body!
            body = nil
            work()
        }
    }
}
