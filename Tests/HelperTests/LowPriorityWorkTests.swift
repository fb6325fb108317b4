import Foundation
import Testing
@testable import Helper

/// Heavy list work runs under SCHED_IDLE (nice 10 if refused) so that event loops answer during a refresh (issue 15).
@Suite struct LowPriorityWorkTests {
    struct Refused: Error, Equatable { var line: Int }

    @Test func the_work_runs_under_sched_idle_at_nice_10_and_the_caller_keeps_its_priority() throws {
        let before = LowPriorityWork.currentNiceness()
        let (nice, idle) = LowPriorityWork.run { (LowPriorityWork.currentNiceness(), LowPriorityWork.currentPolicyIsIdle()) }
        #expect(nice == max(before, LowPriorityWork.niceness))
        #expect(idle)
        #expect(LowPriorityWork.currentNiceness() == before)
        #expect(!LowPriorityWork.currentPolicyIsIdle())
    }

    @Test func a_typed_error_reaches_the_caller_as_it_was_thrown() {
        #expect(throws: Refused(line: 7)) {
            try LowPriorityWork.run { () throws(Refused) -> Int in throw Refused(line: 7) }
        }
    }

    @Test func work_nested_in_work_runs_in_place_on_the_same_thread() {
        let (outer, inner) = LowPriorityWork.run {
            let outer = pthread_self()
            let inner = LowPriorityWork.run { pthread_self() }
            return (outer, inner)
        }
        #expect(outer != pthread_self())
        #expect(inner == outer)
    }

    @Test func calls_from_many_tasks_at_once_each_get_their_own_result() async {
        let results = await withTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<16 {
                group.addTask { (index, LowPriorityWork.run { (0...index).reduce(0, +) }) }
            }
            var all: [Int: Int] = [:]
            for await (index, sum) in group { all[index] = sum }
            return all
        }
        #expect(results.count == 16)
        for (index, sum) in results { #expect(sum == index * (index + 1) / 2) }
    }

    @Test func the_worker_thread_has_a_name_of_its_own_for_top_and_perf() {
        let name = LowPriorityWork.run { try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) }
        #expect(name == "scrolloff-lists\n")
    }
}
