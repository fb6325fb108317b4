import CThreadShim
import Foundation
import Testing
@testable import Helper

/// The event loops' short time slice (issue 15): asked for per thread, keeping everything else.
@Suite struct EventLoopSchedulingTests {
    @Test func asking_for_a_short_slice_keeps_the_threads_nice_value_and_reports_what_the_kernel_did() {
        let (outcome, before, after, slice) = Self.onThreadOfItsOwn {
            // Nice values are per thread on Linux: this one changes only the new thread.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 5)
            let before = LowPriorityWork.currentNiceness()
            let outcome = EventLoopScheduling.requestShortSlice()
            return (outcome, before, LowPriorityWork.currentNiceness(), scrolloff_fair_slice())
        }
        #expect(before == 5 && after == 5)
        // This kernel either keeps the slice and says so, or has none (before Linux 6.12): never an error.
        switch outcome {
        case .applied: #expect(slice == EventLoopScheduling.sliceNanoseconds)
        case .unsupported: #expect(slice != EventLoopScheduling.sliceNanoseconds)
        case .failed(let code): Issue.record("sched_setattr failed: errno \(code)")
        }
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
