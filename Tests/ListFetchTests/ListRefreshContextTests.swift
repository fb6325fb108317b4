import CThreadShim
import Foundation
import ListFetch
import ScrollOffCore
import Synchronization
import Testing

/// `ListRefreshContext` reaches the store's validator and dropper, which run on threads of their
/// own, and puts those threads under SCHED_IDLE for a refresh only, so the helper can run a
/// refresh's work at the lowest priority and a person's at nice 10 (SPEC §9).
@Suite struct ListRefreshContextTests {
    @Test func the_validator_and_dropper_see_a_refresh_bound_by_the_caller_and_nothing_else() async throws {
        let directory = try Scratch.directory("refresh-context")
        defer { Scratch.remove(directory) }
        // (bound to a refresh, the thread under SCHED_IDLE), as each callback saw it.
        let seenByValidator = Mutex<[[Bool]]>([])
        let seenByDropper = Mutex<[[Bool]]>([])
        let names = HostnameValidator(maxBadLines: 0).asValidator
        let store = ListStore(
            stateDirectory: directory + "/state",
            validator: { path in
                seenByValidator.withLock { $0.append([ListRefreshContext.isRefresh, scrolloff_thread_is_idle_policy() == 1]) }
                return try names(path)
            },
            dropper: { kept, newCopy, output in
                seenByDropper.withLock { $0.append([ListRefreshContext.isRefresh, scrolloff_thread_is_idle_policy() == 1]) }
                return try HeldNamesTests.lineDropper(kept, newCopy, output)
            },
            clock: ManualClock().reading)
        let source = directory + "/kids.txt"
        let name = try ListName("kids")
        try "a.example.com\nb.example.com\n".write(toFile: source, atomically: true, encoding: .utf8)
        // First fetch, as `lists add` does it: not a refresh.
        _ = await store.refresh(name, from: "file://" + source)
        // A refresh under a hold (so the dropper runs), bound as the lists controller binds it.
        try "a.example.com\n".write(toFile: source, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: source)
        let report = await ListRefreshContext.$isRefresh.withValue(true) {
            await store.refresh(name, from: "file://" + source, hold: ListHold(until: nil, reason: "a test lock"))
        }
        #expect(report.metadata.held?.count == 1)
        #expect(seenByValidator.withLock { $0 } == [[false, false], [true, true]])
        #expect(seenByDropper.withLock { $0 } == [[true, true]])
    }
}
