import ControlAPI
@testable import ControlServer
import DomainLists
@testable import Enforcement
@testable import Engine
import Foundation
import ListFetch
import Logging
@testable import LowPriority
import ScrollOffCore
import Synchronization
import Testing
@testable import Helper

/// `setLists` builds the matcher for a list change off the engine actor (SPEC §9: "a list
/// refresh never stalls answers"): a person's calls run meanwhile against what is in force, and
/// what is installed at the end is never stale and never an earlier call's.
///
/// Ordering proofs, not timings: a build is held on a gate (the engine's build probe) until the
/// test has seen the other calls complete, so the tests hold on a loaded 2-core runner.
@Suite("Engine: a list change's matcher is built off the engine")
struct OffActorListBuildTests {
    static func rules(_ text: String) throws -> RuleList { try ListParser.parse(text).rules }

    /// Holds the first `setLists` build whose inputs name `list` until released; records every build's
    /// inputs and the worker's scheduling.
    final class BuildGate: Sendable {
        let list: String?
        let seen = Mutex<[(inputs: MatcherInputs, idle: Bool, nice: Int32)]>([])
        private let release = DispatchSemaphore(value: 0)
        private let held = Mutex(0)

        init(holding list: String?) { self.list = list }

        func probe(_ inputs: MatcherInputs) {
            seen.withLock { $0.append((inputs, LowPriorityWork.currentPolicyIsIdle(), LowPriorityWork.currentNiceness())) }
            guard let list, inputs.listNames.contains(list) else { return }
            // Only the first such build: a build again (the inputs moved) goes through.
            guard held.withLock({ $0 += 1; return $0 == 1 }) else { return }
            // Bounded, so a failing test fails rather than hangs.
            _ = release.wait(timeout: .now() + 60)
        }

        /// Waits (polling, bounded) until a build is held on the gate.
        func waitUntilHeld() async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while held.withLock({ $0 }) < 1 {
                guard ContinuousClock.now < deadline else { throw GateTimeout() }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        func open() { release.signal() }
    }

    struct GateTimeout: Error {}

    /// A flag set when a task's `setLists` has returned.
    final class Returned: Sendable {
        let flag = Mutex(false)
        var value: Bool { flag.withLock { $0 } }
        func set() { flag.withLock { $0 = true } }
    }

    @Test(.timeLimit(.minutes(1)))
    func status_and_a_block_complete_while_a_list_build_is_under_way() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let gate = BuildGate(holding: "slow")
        await engine.setListBuildProbe { gate.probe($0) }
        let returned = Returned()
        let put = Task {
            await engine.setLists(["slow": try Self.rules("slow.example\n")])
            returned.set()
        }
        try await gate.waitUntilHeld()
        // The build is held on its thread; the engine answers meanwhile, with the lists in force.
        _ = try await StatusReport(engine.status())
        _ = try await engine.block(["news.example.com"])
        #expect(await engine.decision("news.example.com").blocked)
        #expect(!returned.value, "setLists returned before its build was released")
        #expect(engine.box.enforcement.tables.entries.contains("slow") == false, "the held build's matcher is in force already")
        gate.open()
        try await put.value
        // The custom domain came in while the build ran: the lists part built goes in with a
        // custom part built for it, not the matcher built without it, and the lists are not built
        // a second time. Checked before any other engine call, which would rebuild a stale
        // matcher and hide it.
        let matcher = engine.box.enforcement.matcher
        #expect(matcher.match("news.example.com").isBlocked, "a stale matcher dropped the custom domain")
        #expect(matcher.match("m.slow.example").isBlocked)
        _ = try await engine.block(["slow"])
        #expect(await engine.decision("m.slow.example").blocked)
        #expect(await engine.decision("news.example.com").blocked, "a stale matcher dropped the custom domain")
        let builds = gate.seen.withLock { $0.map(\.inputs) }
        #expect(builds.count == 1, "the lists were built again for a custom domain: \(builds)")
    }

    @Test(.timeLimit(.minutes(1)))
    func allowed_hosts_reloaded_during_a_build_are_in_the_matcher_installed() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let gate = BuildGate(holding: "slow")
        await engine.setListBuildProbe { gate.probe($0) }
        let put = Task { await engine.setLists(["slow": try Self.rules("||slow.example^\n")]) }
        try await gate.waitUntilHeld()
        await engine.setExtraAllowedHosts(["ok.slow.example"])
        gate.open()
        try await put.value
        let matcher = engine.box.enforcement.matcher
        #expect(matcher.match("m.slow.example").isBlocked)
        #expect(matcher.match("ok.slow.example").isBlocked == false, "the reloaded allowed host was lost by a stale install")
        _ = try await engine.block(["slow"])
        #expect(await engine.decision("m.slow.example").blocked)
        #expect(await engine.decision("ok.slow.example").blocked == false, "the reloaded allowed host was lost by a stale install")
    }

    /// Two list changes that overlap (the engine is reentrant across the build): the later call's
    /// lists end in force, though the earlier call's build finishes last.
    @Test(.timeLimit(.minutes(1)))
    func the_later_of_two_overlapping_list_changes_ends_in_force() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let gate = BuildGate(holding: "first")
        await engine.setListBuildProbe { gate.probe($0) }
        let returned = Returned()
        let first = Task {
            await engine.setLists(["first": try Self.rules("first.example\n")])
            returned.set()
        }
        try await gate.waitUntilHeld()
        await engine.setLists(["second": try Self.rules("second.example\n")])
        #expect(engine.box.enforcement.tables.entries.contains("second"))
        #expect(!returned.value)
        gate.open()
        try await first.value
        let entries = engine.box.enforcement.tables.entries
        #expect(entries.contains("second"))
        #expect(!entries.contains("first"), "the earlier call's build overwrote the later call's lists")
        #expect(try await StatusReport(engine.status()).entries.isEmpty)
        _ = try await engine.block(["second"])
        #expect(await engine.decision("second.example").blocked)
    }

    /// The earlier call's build finishes first but a later call is still building: the earlier
    /// call returns only once the later call's lists are in force, never with neither.
    @Test(.timeLimit(.minutes(1)))
    func an_earlier_call_superseded_returns_once_the_later_calls_lists_are_in_force() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let firstGate = BuildGate(holding: "first")
        let secondGate = BuildGate(holding: "second")
        await engine.setListBuildProbe { firstGate.probe($0); secondGate.probe($0) }
        let first = Task {
            await engine.setLists(["first": try Self.rules("first.example\n")])
            return engine.box.enforcement.tables.entries
        }
        try await firstGate.waitUntilHeld()
        let second = Task { await engine.setLists(["second": try Self.rules("second.example\n")], names: ["first", "second"], keeping: ["first"]) }
        try await secondGate.waitUntilHeld()
        firstGate.open()
        secondGate.open()
        let inForceWhenFirstReturned = try await first.value
        try await second.value
        #expect(inForceWhenFirstReturned.contains("second"), "\(inForceWhenFirstReturned)")
        // `keeping` kept the earlier call's copy, though it was not in force yet.
        _ = try await engine.block(["first", "second"])
        #expect(await engine.decision("first.example").blocked)
        #expect(await engine.decision("second.example").blocked)
    }

    /// Fail closed as before: a list in force whose stored copy no longer reads keeps the matcher
    /// in force (its names stay blocked); the change waits for a good copy.
    @Test func a_kept_list_whose_copy_no_longer_reads_keeps_the_matcher_in_force() async throws {
        let dir = Fixture.temporaryDirectory()
        let names = try ListCopyRebuildTests.writeList(20, to: dir + "/bench.list")
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await ListCopyRebuildTests.putInForce(engine, path: dir + "/bench.list")
        _ = try await engine.block(["bench"])
        try FileManager.default.removeItem(atPath: dir + "/bench.list")
        await engine.setLists(["other": try Self.rules("other.example\n")], names: ["bench", "other"], keeping: ["bench"])
        #expect(await engine.decision(names[3]).blocked, "the list's names opened when its copy could not be read")
        #expect(engine.box.enforcement.tables.entries.contains("other") == false)
        // A good copy: the change goes through.
        _ = try ListCopyRebuildTests.writeList(20, to: dir + "/bench.list")
        let parsed = HelperEngine.parseLists(files: ["bench": dir + "/bench.list"], budget: .default)
        await engine.setLists(parsed.lists.merging(["other": try Self.rules("other.example\n")]) { a, _ in a },
                              names: ["bench", "other"], copies: parsed.copies)
        _ = try await engine.block(["other"])
        #expect(await engine.decision(names[3]).blocked)
        #expect(await engine.decision("other.example").blocked)
    }

    /// The rules handed to `setLists` serve its build only; a later rebuild reads the stored copy.
    @Test func the_rules_handed_in_serve_that_build_only() async throws {
        let dir = Fixture.temporaryDirectory()
        try "on-disk.example\n".write(toFile: dir + "/bench.list", atomically: true, encoding: .utf8)
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await engine.setLists(["bench": try Self.rules("handed-in.example\n")], names: ["bench"],
                              copies: ["bench": ListCopy(path: dir + "/bench.list", budget: .default)])
        _ = try await engine.block(["bench"])
        #expect(await engine.decision("handed-in.example").blocked)
        #expect(await engine.listsLifecycle.freshRules.isEmpty)
        // A later build of the lists (another list added; a custom domain builds only the custom
        // part): the list kept is read from its copy.
        await engine.setLists(["other": try Self.rules("other.example\n")], names: ["bench", "other"], keeping: ["bench"])
        #expect(await engine.decision("on-disk.example").blocked)
        #expect(await engine.decision("handed-in.example").blocked == false)
    }

    /// A person's list change (`lists add`) overlapped by a later refresh's ends only when the
    /// refresh's lists are in force: that build is what the person waits for, so it runs at nice 10,
    /// not under SCHED_IDLE (on busy cores a person would wait for the compiler).
    @Test(.timeLimit(.minutes(1)))
    func a_refreshs_build_that_a_persons_list_change_waits_for_runs_at_nice_10() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let gate = BuildGate(holding: "first")
        await engine.setListBuildProbe { gate.probe($0) }
        let returned = Returned()
        let person = Task {
            await engine.setLists(["first": try Self.rules("first.example\n")])
            returned.set()
        }
        try await gate.waitUntilHeld()
        await ListRefreshContext.$isRefresh.withValue(true) {
            await engine.setLists(["first": try! Self.rules("first.example\n"), "second": try! Self.rules("second.example\n")])
        }
        gate.open()
        try await person.value
        let seen = gate.seen.withLock { $0 }
        #expect(seen.count == 2, "\(seen.map(\.inputs))")
        #expect(seen.last?.inputs.listNames == ["first", "second"])
        #expect(seen.last?.idle == false, "the person's call waited for a build under SCHED_IDLE")
        // A refresh no person waits for still waits for idle CPU.
        await ListRefreshContext.$isRefresh.withValue(true) { await engine.setLists(["third": try! Self.rules("third.example\n")]) }
        #expect(gate.seen.withLock { $0.last?.idle } == true)
    }

    /// A refresh that drops names while a block's cooldown holds the list writes them to the held
    /// file before it replaces the copy (SPEC §3); the copy in force is read again from that same
    /// path while the refresh's build is under way (a custom domain's rebuild in place, hosts
    /// mode's names at every publish), so it must read the held names too, or they open until the
    /// refresh's matcher is installed.
    @Test(.timeLimit(.minutes(1)))
    func names_a_refresh_holds_stay_blocked_while_its_build_is_under_way() async throws {
        let dir = Fixture.temporaryDirectory()
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        let file = dir + "/doom.txt"
        try "a.doom.test\nb.doom.test\nc.doom.test\n".write(toFile: file, atomically: true, encoding: .utf8)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let lists = ListsController(stateDirectory: dir + "/lists", clock: { Instant(date: Date()) }, logger: logger)
        await lists.setGuard(.rules(of: engine))
        let budget = ListsConfiguration().badLineBudget
        await lists.onChange { [logger] snapshot in await HelperControl.apply(snapshot, to: engine, budget: budget, logger: logger) }
        _ = try await lists.add(AddListRequest(url: "file://" + file, name: "doom"))
        _ = try await engine.block(["doom"])
        #expect(await engine.decision("b.doom.test").blocked)

        // The new copy drops b and c; dated ahead so the refresh takes it.
        try "a.doom.test\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(10)], ofItemAtPath: file)
        let gate = BuildGate(holding: "doom")
        await engine.setListBuildProbe { gate.probe($0) }
        let update = Task { try await lists.update(name: "doom") }
        try await gate.waitUntilHeld()
        // The refresh has written its held names and its copy; its matcher is not built yet.
        #expect(FileManager.default.fileExists(atPath: dir + "/lists/lists/doom.held"))
        let enforcement = engine.box.enforcement
        #expect(enforcement.hostsNames(profile: 0, at: enforcement.now()).contains("b.doom.test"),
                "hosts mode dropped a held name while the refresh's build was under way")
        _ = try await engine.block(["news.example.com"]) // a rebuild in place, from the copy in force
        #expect(await engine.decision("b.doom.test").blocked, "a held name opened while the refresh's build was under way")
        gate.open()
        let results = try await update.value
        #expect(results.first?.outcome == RefreshOutcome.updated, "\(results)")
        #expect(await engine.decision("b.doom.test").blocked)
        #expect(await engine.decision("news.example.com").blocked)
    }

    /// Snapshots reach the engine in the order their parses finish: a refresh's (under SCHED_IDLE)
    /// can finish after a later `lists add`'s. The older snapshot, handed in last, must not drop
    /// the added list (until the next change, blocking it would say it is no list at all).
    @Test(.timeLimit(.minutes(1)))
    func an_older_lists_snapshot_handed_in_after_a_newer_one_changes_nothing() async throws {
        let dir = Fixture.temporaryDirectory()
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        try "kept.example\n".write(toFile: dir + "/kept.list", atomically: true, encoding: .utf8)
        try "added.example\n".write(toFile: dir + "/added.list", atomically: true, encoding: .utf8)
        let kept = ListsSnapshot.ActiveList(name: "kept", url: "file://\(dir)/kept.txt", copyPath: dir + "/kept.list", entryCount: 1)
        let added = ListsSnapshot.ActiveList(name: "added", url: "file://\(dir)/added.txt", copyPath: dir + "/added.list", entryCount: 1)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let budget = ListsConfiguration().badLineBudget
        await HelperControl.apply(ListsSnapshot(lists: [kept, added], allowedHosts: [], sequence: 2), to: engine, budget: budget, logger: logger)
        await HelperControl.apply(ListsSnapshot(lists: [kept], allowedHosts: [], sequence: 1), to: engine, budget: budget, logger: logger)
        _ = try await engine.block(["added", "kept"])
        #expect(await engine.decision("added.example").blocked)
        #expect(await engine.decision("kept.example").blocked)
        // A newer snapshot still goes through.
        await HelperControl.apply(ListsSnapshot(lists: [added], allowedHosts: [], sequence: 3), to: engine, budget: budget, logger: logger)
        #expect(await engine.decision("kept.example").blocked == false)
        #expect(await engine.decision("added.example").blocked)
    }

    /// A refresh's build waits for idle CPU (the engine is free meanwhile); a person's runs at nice 10.
    @Test func a_refreshs_build_runs_under_sched_idle_and_a_persons_at_nice_10() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let gate = BuildGate(holding: nil)
        await engine.setListBuildProbe { gate.probe($0) }
        await ListRefreshContext.$isRefresh.withValue(true) { await engine.setLists(["a": try! Self.rules("a.example\n")]) }
        await engine.setLists(["b": try Self.rules("b.example\n")])
        let seen = gate.seen.withLock { $0 }
        #expect(seen.map(\.idle) == [true, false])
        #expect(seen.allSatisfy { $0.nice >= LowPriorityWork.niceness })
    }
}
