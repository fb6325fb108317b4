import ControlAPI
@testable import ControlServer
import DomainLists
@testable import Engine
import Foundation
import ListFetch
import Logging
@testable import LowPriority
import ScrollOffCore
import Synchronization
import Testing

/// Heavy list work runs at nice 10, and a refresh's under SCHED_IDLE, so that event loops answer meanwhile (SPEC §9).
@Suite struct LowPriorityWorkTests {
    struct Refused: Error, Equatable { var line: Int }

    @Test func the_work_runs_at_nice_10_and_the_caller_keeps_its_priority_and_class() throws {
        let before = LowPriorityWork.currentNiceness()
        let inside = ListRefreshContext.$isRefresh.withValue(true) { LowPriorityWork.run { LowPriorityWork.currentNiceness() } }
        #expect(inside == max(before, LowPriorityWork.niceness))
        #expect(LowPriorityWork.currentNiceness() == before)
        #expect(!LowPriorityWork.currentPolicyIsIdle())
    }

    @Test func refresh_work_has_yield_points_on_and_work_a_person_waits_for_and_the_caller_do_not() async {
        let refresh = ListRefreshContext.$isRefresh.withValue(true) { LowPriorityWork.run { CooperativeYield.isEnabledOnThisThread } }
        let performed = await ListRefreshContext.$isRefresh.withValue(true) {
            await LowPriorityWork.perform { CooperativeYield.isEnabledOnThisThread }
        }
        let asked = LowPriorityWork.run { CooperativeYield.isEnabledOnThisThread }
        #expect(refresh)
        #expect(performed)
        #expect(!asked, "nice-10 work a person waits for keeps its whole slice")
        #expect(!CooperativeYield.isEnabledOnThisThread)
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

    @Test func work_bound_to_a_refresh_runs_under_sched_idle_and_other_work_at_nice_10() {
        let refresh = ListRefreshContext.$isRefresh.withValue(true) { LowPriorityWork.run { LowPriorityWork.currentPolicyIsIdle() } }
        let asked = LowPriorityWork.run { LowPriorityWork.currentPolicyIsIdle() }
        #expect(refresh)
        #expect(!asked)
    }

    @Test func perform_runs_the_work_on_a_named_thread_at_nice_10_or_under_sched_idle_for_a_refresh() async {
        let asked = await LowPriorityWork.perform {
            (LowPriorityWork.currentNiceness(), LowPriorityWork.currentPolicyIsIdle(),
             try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))
        }
        let refresh = await ListRefreshContext.$isRefresh.withValue(true) {
            await LowPriorityWork.perform { LowPriorityWork.currentPolicyIsIdle() }
        }
        #expect(asked.0 >= LowPriorityWork.niceness)
        #expect(!asked.1)
        #expect(asked.2 == "scrolloff-lists\n")
        #expect(refresh)
        #expect(!LowPriorityWork.currentPolicyIsIdle())
    }

    @Test func perform_hands_a_typed_error_to_the_caller_as_it_was_thrown() async {
        await #expect(throws: Refused(line: 9)) {
            try await LowPriorityWork.perform { () throws(Refused) -> Int in throw Refused(line: 9) }
        }
    }

    /// `perform` suspends its caller rather than blocking a thread of Swift's pool: more calls than
    /// the pool has threads all run at once (each waits on a gate released only when all have
    /// started). With a pool thread blocked per call, no more than the pool's width could start.
    /// The calls and the wait run on a pool of this test's own (`TwoThreadExecutor`): on the shared
    /// pool, other suites' blocking waits in a full run held every thread for minutes, and then not
    /// even the first call could start.
    @Test(.timeLimit(.minutes(1)))
    func perform_holds_no_pool_thread_while_the_work_runs() async throws {
        let pool = TwoThreadExecutor()
        defer { pool.shutdown() }
        try await withTaskExecutorPreference(pool) { try await performsOnAPoolOfTwo(pool) }
    }

    private func performsOnAPoolOfTwo(_ pool: TwoThreadExecutor) async throws {
        let calls = TwoThreadExecutor.width + 4
        final class Started: Sendable { let count = Mutex(0) }
        let started = Started()
        let gate = DispatchSemaphore(value: 0)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<calls {
                group.addTask(executorPreference: pool) {
                    await LowPriorityWork.perform {
                        started.count.withLock { $0 += 1 }
                        // Bounded, so a failing run fails rather than hangs.
                        _ = gate.wait(timeout: .now() + 30)
                        return index
                    }
                }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while started.count.withLock({ $0 }) < calls, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            let all = started.count.withLock { $0 }
            for _ in 0..<calls { gate.signal() }
            #expect(all == calls, "only \(all) of \(calls) calls started while the others waited")
            var seen = Set<Int>()
            for try await index in group { seen.insert(index) }
            #expect(seen == Set(0..<calls))
        }
    }

    /// The lists' observers (the engine's parse and matcher build) run inside `lists update`'s
    /// task: its work is a refresh's, and a list a person adds is not.
    @Test func lists_update_hands_its_observers_refresh_work_and_lists_add_does_not() async throws {
        let observed = try await ObservedLists()
        defer { observed.remove() }
        _ = try await observed.lists.add(AddListRequest(url: "file://" + observed.file, name: "kids"))
        let added = observed.seen.withLock { $0 }
        _ = try await observed.lists.update(name: "kids")
        let updated = observed.seen.withLock { Array($0.dropFirst(added.count)) }
        #expect(!added.isEmpty && added.allSatisfy { !$0 }, "\(added)")
        #expect(!updated.isEmpty && updated.allSatisfy { $0 }, "\(updated)")
    }

    /// A source the configuration file names is fetched for the first time by the refresh
    /// service's pass: nothing of it is in force yet, and the person who started the helper or
    /// reloaded the file waits for it, so it is not a refresh's work.
    @Test func a_configured_sources_first_fetch_is_not_refresh_work() async throws {
        let observed = try await ObservedLists()
        defer { observed.remove() }
        _ = await observed.lists.setConfiguredSources(
            [ConfiguredListSource(name: "kids", url: "file://" + observed.file)], refreshPeriod: .hours(6), definedIn: "scrolloff.toml")
        let before = observed.seen.withLock { $0.count }
        _ = await observed.lists.refreshDueLists()
        let fetched = observed.seen.withLock { Array($0.dropFirst(before)) }
        #expect(!fetched.isEmpty && fetched.allSatisfy { !$0 }, "\(fetched)")
    }

    /// A lists controller in a folder of its own, a two-name list file, and, per publish, whether
    /// the list work an observer starts runs under SCHED_IDLE.
    private final class ObservedLists: Sendable {
        let directory = NSTemporaryDirectory() + "lowprio-" + UUID().uuidString
        let lists: ListsController
        let seen = Mutex<[Bool]>([])
        var file: String { directory + "/list.txt" }

        init() async throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try "a.example\nb.example\n".write(toFile: directory + "/list.txt", atomically: true, encoding: .utf8)
            lists = ListsController(stateDirectory: directory, clock: { Instant(date: Date()) }, logger: Logger(label: "test"))
            await lists.onChange { [weak self] _ in
                let idle = LowPriorityWork.run { LowPriorityWork.currentPolicyIsIdle() }
                self?.seen.withLock { $0.append(idle) }
            }
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// A task executor with two threads of its own, so a test of thread use is not at the mercy of what
/// other suites do to Swift's shared pool.
final class TwoThreadExecutor: TaskExecutor, @unchecked Sendable {
    static let width = 2
    private let state = Mutex<(jobs: [UnownedJob], stopped: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)
    private var threads: [Thread] = []

    init() {
        for _ in 0..<Self.width {
            let thread = Thread { [self] in self.work() }
            threads.append(thread)
            thread.start()
        }
    }

    func enqueue(_ job: UnownedJob) {
        state.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    /// Lets both threads end once the jobs queued so far have run.
    func shutdown() {
        state.withLock { $0.stopped = true }
        for _ in 0..<Self.width { ready.signal() }
    }

    private func work() {
        while true {
            ready.wait()
            let next: UnownedJob?? = state.withLock { s in
                if !s.jobs.isEmpty { return .some(s.jobs.removeFirst()) }
                return s.stopped ? .none : .some(nil)
            }
            guard let job = next else { return }
            job?.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
