import CThreadShim
import Logging
import NIOCore
import NIOPosix

/// How many event loops answer DNS, and how the kernel schedules them.
///
/// Two things a resolver sharing its cores with list work needs (SPEC §9, "a list refresh never
/// stalls answers"):
///
/// - **One event loop per core the helper may run on.** SwiftNIO's `System.coreCount` reads the
///   cgroup files at the cgroup mount's root (`cpu.max`, `cpuset.cpus`), not the affinity mask
///   that `taskset` and systemd's `CPUAffinity=` and `AllowedCPUs=` set, so a helper confined to
///   one core ran two loops that took turns on it, each waiting for the other to finish.
/// - **A short time slice for each loop.** Under Linux's EEVDF scheduler (6.6 and later) a
///   waking thread preempts the running one at once only if it asks for a shorter slice than the
///   running one's (the kernel's PREEMPT_SHORT rule); otherwise the running thread keeps the CPU
///   until its slice ends and the next timer tick comes (4 ms at 250 Hz). A refresh's download,
///   parse and matcher build run under `SCHED_IDLE` (`LowPriorityWork`), which any waking thread
///   preempts; what a person asks for (its parse and matcher build at nice 10), the engine and
///   the database run on ordinary threads, and a loop that asks for the shortest slice the kernel allows (100 µs, `sched_setattr(2)`, honoured from Linux 6.12)
///   preempts those when it wakes too. A loop's work between two waits is one batch of datagrams,
///   tens of microseconds, so the short slice fits it. Any user may shorten their own threads'
///   slice; nothing else about the thread changes.
public enum EventLoopScheduling {
    /// The slice each event loop asks for: the kernel's minimum for a fair-class thread.
    static let sliceNanoseconds: UInt64 = 100_000

    /// Event loops for `threads = 0`: one per CPU the helper may run on, the fewer of NIO's count
    /// (cgroup quota and cpuset) and the process's affinity mask.
    public static var availableCores: Int {
        let affinity = Int(scrolloff_affinity_cpu_count())
        return max(1, affinity > 0 ? min(affinity, System.coreCount) : System.coreCount)
    }

    /// What `requestShortSlice` achieved on the calling thread.
    package enum SliceOutcome: Equatable, Sendable {
        /// The kernel reports the requested slice.
        case applied
        /// The call succeeded but the kernel keeps no per-thread slice (before Linux 6.12).
        case unsupported
        /// The call failed with this errno (a real-time policy someone gave the thread, say).
        case failed(Int32)
    }

    /// Asks for the short slice on the calling thread.
    package static func requestShortSlice() -> SliceOutcome {
        let failure = scrolloff_set_fair_slice(sliceNanoseconds)
        if failure != 0 { return .failed(failure) }
        return scrolloff_fair_slice() == sliceNanoseconds ? .applied : .unsupported
    }

    /// Gives every loop of `group` the short slice, on the loop's own thread, and logs once what
    /// the kernel did with it. A kernel without per-thread slices keeps its default scheduling:
    /// answers are the same, only a refresh's effect on latency differs.
    package static func prepare(_ group: MultiThreadedEventLoopGroup, logger: Logger) async {
        var outcomes: [SliceOutcome] = []
        for loop in group.makeIterator() {
            if let outcome = try? await loop.submit({ requestShortSlice() }).get() { outcomes.append(outcome) }
        }
        let failures = outcomes.compactMap { outcome -> Int32? in
            if case .failed(let code) = outcome { return code } else { return nil }
        }
        if let code = failures.first {
            logger.info("event loops keep the kernel's default time slice (sched_setattr: errno \(code)); answers may wait a few milliseconds behind the helper's other threads")
        } else if outcomes.contains(.unsupported) {
            logger.debug("this kernel has no per-thread time slice (Linux 6.12 and later have one); event loops keep the default")
        } else {
            logger.debug("\(outcomes.count) event loops answer DNS, each with a \(sliceNanoseconds / 1000) µs time slice")
        }
    }
}
