import CThreadShim
import Foundation
@testable import LowPriority
@testable import ServiceKit
import Testing

/// The event loops' short time slice (SPEC §9): asked for per thread, keeping everything else.
@Suite struct EventLoopSchedulingTests {
    @Test func asking_for_a_short_slice_keeps_the_threads_nice_value_and_is_applied_from_linux_6_12() {
        let (outcome, before, after, slice) = Self.onThreadOfItsOwn {
            let before = LowPriorityWork.currentNiceness()
            let outcome = EventLoopScheduling.requestShortSlice()
            return (outcome, before, LowPriorityWork.currentNiceness(), scrolloff_fair_slice())
        }
        #expect(after == before)
        if Self.kernelHasFairSlices {
            #expect(outcome == .applied)
            #expect(slice == EventLoopScheduling.sliceNanoseconds)
        } else {
            // Before Linux 6.12 the call succeeds and the kernel keeps no slice: never an error.
            #expect(outcome == .unsupported)
        }
    }

    @Test func a_thread_an_event_loop_starts_gets_the_default_slice_back() {
        let (loop, child) = Self.onThreadOfItsOwn {
            _ = EventLoopScheduling.requestShortSlice()
            let child = Self.onThreadOfItsOwn { scrolloff_fair_slice() }
            return (scrolloff_fair_slice(), child)
        }
        if Self.kernelHasFairSlices {
            #expect(loop == EventLoopScheduling.sliceNanoseconds)
            // SCHED_FLAG_RESET_ON_FORK: a libdispatch worker a loop happens to start is not favoured.
            #expect(child != EventLoopScheduling.sliceNanoseconds && child > 0)
        }
    }

    /// Linux 6.12 and later keep a per-thread slice for the fair class (`sched_attr.sched_runtime`).
    private static var kernelHasFairSlices: Bool {
        let release = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? ""
        let numbers = release.split(separator: ".", maxSplits: 2).prefix(2).map { Int($0.prefix { $0.isNumber }) ?? 0 }
        return numbers.count == 2 && (numbers[0], numbers[1]) >= (6, 12)
    }

    private static func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let box = Box<T>()
        let thread = Thread {
            box.value = body()
            done.signal()
        }
        thread.start()
        done.wait()
        return box.value!
    }

    private final class Box<T>: @unchecked Sendable { var value: T? }
}
