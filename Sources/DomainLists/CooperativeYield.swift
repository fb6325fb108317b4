#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Yield points for the long loops of list work (parsing a copy, the held-names difference,
/// building the matcher): a thread that asked for them enters the scheduler at the first point
/// after each `interval`, so an event loop woken on the same core gets the core then at the
/// latest. The points are a few hundred names apart (tens of microseconds of work), so the
/// longest run between two yields is `interval` and that spacing.
///
/// Why (SPEC §9.10: a list refresh never stalls answers): a waking event loop preempts a
/// `SCHED_IDLE` or nice-10 list thread only when the reschedule reaches that thread's core. The
/// kernel marks the running thread at once, but it acts on the mark only where that thread next
/// enters the kernel (a system call, a fault, an interrupt). A `sched_switch`/`sched_wakeup` trace
/// of a 1,000,000-name refresh on this VM showed the list thread running on in user space for
/// 1.4–7.5 ms after the loop had been woken from the other core, the reschedule interrupt landing
/// late. The waker has already queued the loop on that core and marked the running thread, so a
/// `sched_yield(2)` every `interval` lets the loop in by the list thread's own clock, whatever
/// the interrupt does; with nothing else runnable the call returns at once (about a microsecond,
/// so 0.5% of a thread yielding every 200 µs).
///
/// Off by default: a thread turns it on for itself (`enableOnThisThread`: the helper's
/// `SCHED_IDLE` threads, `LowPriorityThread`). Elsewhere (the CLI, tests, an event loop, work at
/// nice 10) `point()` reads one thread-specific value and returns.
///
/// The time is kept in a thread-specific pointer as a bit pattern, wrapping on 32-bit platforms
/// every 4.3 s: the difference of two readings is right while they are less than that apart, and
/// a wrong one only moves one yield.
public enum CooperativeYield {
    /// The shortest time between two yields of a thread, in nanoseconds: 200 µs, within the
    /// 20,000-QPS steady p99 `bench/dns.sh` measures (80–200 µs), a fifth of the 1 ms stalls it
    /// counts.
    public static let interval: UInt = 200_000

    /// Turns yield points on for the calling thread, for the rest of its life.
    public static func enableOnThisThread() {
        mark(now())
    }

    /// Whether the calling thread's yield points are on (for tests).
    public static var isEnabledOnThisThread: Bool { pthread_getspecific(key) != nil }

    /// `sched_yield` calls the calling thread's yield points made (for tests: whether a loop
    /// reaches its points).
    public static var yieldsOnThisThread: Int { Int(bitPattern: UInt(bitPattern: pthread_getspecific(countKey))) }

    /// A yield point: yields the core if the calling thread turned them on and ran `interval`
    /// since its last yield. Cheap enough for every few hundred names: one thread-specific read,
    /// and on a marked thread one read of the vDSO clock.
    @inline(__always)
    public static func point() {
        guard let last = pthread_getspecific(key) else { return }
        yieldIfDue(since: UInt(bitPattern: last))
    }

    @inline(never)
    private static func yieldIfDue(since last: UInt) {
        guard now() &- last >= interval else { return }
        sched_yield()
        pthread_setspecific(countKey, UnsafeRawPointer(bitPattern: UInt(bitPattern: yieldsOnThisThread &+ 1)))
        mark(now())
    }

    /// Records `time` as the thread's last yield; never 0, which would read as "off".
    private static func mark(_ time: UInt) {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: time | 1))
    }

    /// Nanoseconds on the monotonic clock, wrapping at the platform's word size.
    private static func now() -> UInt {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt(truncatingIfNeeded: time.tv_sec) &* 1_000_000_000 &+ UInt(truncatingIfNeeded: time.tv_nsec)
    }

    /// Per thread: the monotonic time of the last yield; absent where yield points are off.
    private static let key = makeKey()
    /// Per thread: how many times it yielded.
    private static let countKey = makeKey()

    private static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }
}
