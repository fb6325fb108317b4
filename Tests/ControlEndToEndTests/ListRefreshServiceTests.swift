import ControlAPI
import ControlServer
import Foundation
import Helper
import ListFetch
import Logging
import ScrollOffCore
import ServiceLifecycle
import Synchronization
import Testing

/// The refresh service with a hand-moved clock: it must sleep until exactly the planned instant,
/// refresh then (and not before), and re-plan when a list is added.
extension ControlEndToEnd {
@Suite
struct ListRefreshServiceTests {
    let start = Instant(millisecondsSince1970: 1_800_000_000_000)

    /// The lists of a test: in `directory`, on `timer`'s clock.
    static func controller(_ directory: String, _ timer: ManualTimer, _ plan: RefreshPlan) -> ListsController {
        ListsController(
            stateDirectory: directory, configuration: ListsConfiguration(refreshPlan: plan),
            clock: { timer.now() }, logger: Logger(label: "test"))
    }

    /// `controller` with a three-name list "kids" added from a file, and that file's path.
    static func controllerWithKidsList(_ directory: String, _ timer: ManualTimer, _ plan: RefreshPlan) async throws -> (ListsController, String) {
        let lists = controller(directory, timer, plan)
        let file = directory + "/list.txt"
        try writeList(file, names: 3)
        _ = try await lists.add(AddListRequest(url: "file://" + file, name: "kids"))
        return (lists, file)
    }

    @Test func refreshes_a_list_at_its_planned_instant_and_not_before() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let timer = ManualTimer(now: start)
        let plan = RefreshPlan(period: .hours(6), jitterWindow: .minutes(10))
        let (lists, file) = try await Self.controllerWithKidsList(directory, timer, plan)
        let name = try ListName("kids")
        let planned = try #require(plan.nextRefresh(for: name, history: RefreshHistory(lastSuccess: start)))
        #expect(planned >= start + .hours(6) && planned < start + .hours(6) + .minutes(10))

        let service = ListRefreshService(lists: lists, timer: timer, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        #expect(await eventually { timer.pendingDeadlines == [planned] }, "sleeps until \(planned), saw \(timer.pendingDeadlines)")

        try writeList(file, names: 7)
        timer.advance(to: planned - Span(milliseconds: 1))
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await lists.store.metadata(for: name)?.entryCount == 3, "nothing refreshes 1 ms early")
        #expect(timer.pendingDeadlines == [planned])

        timer.advance(to: planned)
        #expect(await eventually { (try? await lists.store.metadata(for: name)?.entryCount) == 7 })
        #expect(try await lists.store.metadata(for: name)?.lastSuccess == planned)
        // And it plans the next one a period later.
        let following = try #require(plan.nextRefresh(for: name, history: RefreshHistory(lastSuccess: planned)))
        #expect(await eventually { timer.pendingDeadlines == [following] })
    }

    /// `HelperControl` puts the lists on disk in force once when it is built; the service starting
    /// must not parse and hand them over a second time.
    @Test func starting_the_service_with_nothing_due_publishes_nothing() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let timer = ManualTimer(now: start)
        let plan = RefreshPlan(period: .hours(6), jitterWindow: .minutes(10))
        let (lists, file) = try await Self.controllerWithKidsList(directory, timer, plan)
        let published = Mutex(0)
        await lists.onChange { _ in published.withLock { $0 += 1 } }

        let service = ListRefreshService(lists: lists, timer: timer, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        #expect(await eventually { timer.pendingDeadlines.count == 1 }, "the service sleeps until the planned refresh")
        #expect(published.withLock { $0 } == 0)
    }

    /// What follows the lists (the firewall's DoH addresses, SPEC §9b) is told after each refresh,
    /// the timer's and `lists update`'s, and not when the service merely starts or a list is added.
    @Test func the_refreshed_signal_is_sent_after_a_timer_refresh_and_after_lists_update_only() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let timer = ManualTimer(now: start)
        let plan = RefreshPlan(period: .hours(6), jitterWindow: .minutes(10))
        let (lists, file) = try await Self.controllerWithKidsList(directory, timer, plan)
        let signals = Mutex(0)
        let refreshed = lists.refreshed
        let listening = Task {
            while !Task.isCancelled {
                await refreshed.wait()
                if !Task.isCancelled { signals.withLock { $0 += 1 } }
            }
        }
        defer { listening.cancel() }
        let service = ListRefreshService(lists: lists, timer: timer, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        #expect(await eventually { timer.pendingDeadlines.count == 1 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(signals.withLock { $0 } == 0, "starting with nothing due, and adding a list, is no refresh")

        timer.advance(to: try #require(timer.pendingDeadlines.first))
        #expect(await eventually { signals.withLock { $0 } == 1 }, "the timer's refresh")
        _ = try await lists.update(name: nil)
        #expect(await eventually { signals.withLock { $0 } == 2 }, "scrolloff lists update")
    }

    @Test func wakes_early_when_a_list_is_added_and_replans() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let timer = ManualTimer(now: start)
        let plan = RefreshPlan(period: .hours(24))
        let lists = Self.controller(directory, timer, plan)
        let service = ListRefreshService(lists: lists, timer: timer, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        // With no list there is nothing to sleep until: the service waits for a change only.
        try await Task.sleep(for: .milliseconds(200))
        #expect(timer.sleepCalls.isEmpty)

        let file = directory + "/a.txt"
        try writeList(file, names: 2)
        timer.advance(to: start + .minutes(5))
        _ = try await lists.add(AddListRequest(url: "file://" + file, name: "a"))
        let planned = try #require(plan.nextRefresh(for: try ListName("a"), history: RefreshHistory(lastSuccess: start + .minutes(5))))
        #expect(await eventually { timer.pendingDeadlines == [planned] })
    }

    @Test func a_failed_timer_refresh_keeps_the_copy_and_retries_sooner() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let timer = ManualTimer(now: start)
        let plan = RefreshPlan(period: .hours(24), retryAfterFailure: .hours(1))
        let lists = Self.controller(directory, timer, plan)
        let file = directory + "/b.txt"
        try writeList(file, names: 4)
        _ = try await lists.add(AddListRequest(url: "file://" + file, name: "b"))
        let name = try ListName("b")
        let planned = try #require(plan.nextRefresh(for: name, history: RefreshHistory(lastSuccess: start)))
        let service = ListRefreshService(lists: lists, timer: timer, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        #expect(await eventually { timer.pendingDeadlines == [planned] })

        try FileManager.default.removeItem(atPath: file)
        timer.advance(to: planned)
        #expect(await eventually { (try? await lists.store.metadata(for: name)?.consecutiveFailures) == 1 })
        let meta = try #require(try await lists.store.metadata(for: name))
        #expect(meta.entryCount == 4)
        #expect(FileManager.default.fileExists(atPath: lists.store.copyPath(for: name)))
        let retry = try #require(plan.nextRefresh(for: name, history: meta.history))
        #expect(retry < planned + .hours(2))
        #expect(await eventually { timer.pendingDeadlines == [retry] })
    }
}
}
