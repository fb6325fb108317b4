import ControlAPI
@testable import ControlServer
@testable import Engine
import Foundation
import ListFetch
import Logging
import PostgresStore
import ScrollOffCore
import Store
import Synchronization
import TestSupport
import Testing

/// SPEC §3.4 across helpers: the names a refresh drops while a rule holds a list are the
/// household's, on one real PostgreSQL. Each helper here is an engine and a lists controller whose
/// copies go in force as `HelperControl` puts them; neither listens, so each test says by hand
/// when a helper reloads, and which one is behind.
@Suite(.serialized) struct SharedHeldListNamesTests {
    final class Counter: Sendable {
        private let value = Mutex(0)
        func bump() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// A helper of the household: its engine on the shared store and its lists controller, reading
    /// another helper's `file://` source from `folder` with a member's rights.
    static func node(_ name: String, on db: TestPostgres, clock: HouseholdClock, folder: String) async throws
        -> (engine: HelperEngine, lists: ListsController)
    {
        let engine = try await SharedFixture.node(name, on: db, clock: clock, listening: false).engine
        let configuration = ListsConfiguration(sourceRules: ListSourceRules(memberFolders: [folder]))
        let logger = Logger(label: "pg-held-\(name)")
        let lists = ListsController(stateDirectory: "\(folder)/state-\(name)", configuration: configuration,
                                    clock: { clock.read().wall }, logger: logger)
        await lists.setGuard(.rules(of: engine))
        let budget = configuration.badLineBudget
        await lists.onChange { snapshot in await HelperControl.apply(snapshot, to: engine, budget: budget, logger: logger) }
        return (engine, lists)
    }

    /// The list source with names `doomN.example.com` for `numbers`, dated `secondsAgo` (each
    /// version older than the next, so a refresh sees the change).
    static func write(_ path: String, _ numbers: some Sequence<Int>, secondsAgo: Double) throws {
        try numbers.map { "doom\($0).example.com\n" }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        try FileManager.default.setAttributes([.modificationDate: Date() - secondsAgo], ofItemAtPath: path)
    }

    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "scrolloff-pg-held-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Read on the other helper with a member's rights: a world-readable file in a member folder.
        chmod(folder, 0o755)
        return folder
    }

    static func heldCount(_ db: TestPostgres) async throws -> String {
        try await onOwnThread { try db.query("SELECT name_count FROM held_list_names WHERE name = 'doom'") }
    }

    @Test func names_one_helper_held_under_a_lock_are_blocked_by_a_helper_whose_copy_never_had_them_until_the_lock_ends_on_both() async throws {
        let db = try await onOwnThread { try TestPostgres() }
        defer { db.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/doom.txt"
        try Self.write(file, 0..<20, secondsAgo: 60)
        let clock = HouseholdClock()
        let a = try await Self.node("a", on: db, clock: clock, folder: folder)
        let b = try await Self.node("b", on: db, clock: clock, folder: folder)
        let told = Counter()
        await b.engine.setListSourcesHandler { told.bump() }

        _ = try await a.lists.add(AddListRequest(url: "file://" + file, name: "doom"))
        _ = try await a.engine.block(["doom"], reason: "sleep first")
        let until = try #require(await a.engine.listHold("doom")?.opensAt)
        // The source keeps five names; A's refresh holds the fifteen it dropped, for the household at once.
        try Self.write(file, 0..<5, secondsAgo: 30)
        #expect(try await a.lists.update(name: "doom").map(\.outcome) == [RefreshOutcome.updated])
        #expect(try await Self.heldCount(db) == "15")
        #expect(await a.engine.blocks("doom12.example.com"))

        // B's first copy comes after the drop (five names): it blocks the fifteen all the same.
        #expect(await b.engine.reloadFromStore())
        #expect(told.count >= 1, "B's lists controller was not told of the household's held names")
        #expect(try await b.lists.update(name: "doom").map(\.outcome) == [RefreshOutcome.updated])
        for n in [5, 12, 19] { #expect(await b.engine.blocks("doom\(n).example.com"), "doom\(n) is open on B under the lock") }
        #expect(await b.engine.blocks("doom3.example.com"))

        // Not a moment early, on either helper.
        clock.pass(until - (await a.engine.trustedNow()) - .minutes(1))
        _ = await a.lists.refreshDueLists()
        _ = await b.lists.refreshDueLists()
        #expect(await a.engine.blocks("doom12.example.com"))
        #expect(await b.engine.blocks("doom12.example.com"))
        #expect(try await Self.heldCount(db) == "15")

        // Over: the first helper to find it so lets them go for the household, the other follows.
        clock.pass(.minutes(2))
        _ = await a.lists.refreshDueLists()
        #expect(try await Self.heldCount(db) == "0")
        #expect(await !a.engine.blocks("doom12.example.com"))
        #expect(await b.engine.reloadFromStore())
        _ = await b.lists.refreshDueLists()
        #expect(await !b.engine.blocks("doom12.example.com"))
        #expect(await b.engine.blocks("doom3.example.com"), "the list's own names stay blocked")
        #expect(try await onOwnThread { try db.query("SELECT count(*) FROM events WHERE kind IN ('listNamesHeld', 'listNamesReleased')") } == "2")
    }

    @Test func two_helpers_dropping_different_names_hold_both_and_a_helper_behind_cannot_let_them_go() async throws {
        let db = try await onOwnThread { try TestPostgres() }
        defer { db.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/doom.txt"
        try Self.write(file, 0..<20, secondsAgo: 90)
        let clock = HouseholdClock()
        let a = try await Self.node("a", on: db, clock: clock, folder: folder)
        let b = try await Self.node("b", on: db, clock: clock, folder: folder)
        _ = try await a.lists.add(AddListRequest(url: "file://" + file, name: "doom"))
        _ = try await a.engine.block(["doom"], reason: "sleep first")
        #expect(await b.engine.reloadFromStore())
        #expect(try await b.lists.update(name: "doom").map(\.outcome) == [RefreshOutcome.updated])

        // A's refresh drops 15–19; B's, before B has heard of A's, drops 0–4: its commit is
        // decided again on A's, and the household holds both.
        try Self.write(file, 0..<15, secondsAgo: 60)
        _ = try await a.lists.update(name: "doom")
        try Self.write(file, 5..<20, secondsAgo: 30)
        _ = try await b.lists.update(name: "doom")
        #expect(try await Self.heldCount(db) == "10")
        for n in [0, 4, 15, 19] { #expect(await b.engine.blocks("doom\(n).example.com"), "doom\(n) is open on B") }
        // A hears of B's names; its own stay held.
        #expect(await a.engine.reloadFromStore())
        _ = await a.lists.refreshDueLists()
        for n in [0, 4, 15, 19] { #expect(await a.engine.blocks("doom\(n).example.com"), "doom\(n) is open on A") }

        // The cooldown ends and A blocks the list again before B hears of it: B, behind, finds the
        // lock over by its own state, but its release is decided on the household's and refused.
        let until = try #require(await a.engine.listHold("doom")?.opensAt)
        clock.pass(until - (await a.engine.trustedNow()) + .minutes(1))
        _ = try await a.engine.block(["doom"], reason: "one more evening")
        _ = await b.lists.refreshDueLists()
        #expect(try await Self.heldCount(db) == "10")
        for n in [0, 4] { #expect(await b.engine.blocks("doom\(n).example.com"), "B let doom\(n) go on a state behind the household's") }
        #expect(await b.engine.listHold("doom") != nil, "B did not reload the household's state")
    }
}
