import ControlAPI
@testable import ControlServer
@testable import Engine
import Foundation
import ListFetch
import Logging
import PostgresStore
import ScrollOffCore
import ServiceKit
import Store
import Synchronization
import TestSupport
import Testing

/// Which lists the household has, on one real PostgreSQL: a list added through one helper is the
/// other's at its next reload (its lists controller told), one name is added once however the two
/// race, and a removal through either is heard by the other.
@Suite(.serialized) struct SharedHouseholdListsTests {
    @Test func a_list_added_through_one_helper_reaches_the_other_and_one_name_is_added_once() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        let told = Mutex(0)
        await b.engine.setListSourcesHandler { told.withLock { $0 += 1 } }
        let now = await a.engine.trustedNow()

        try await a.engine.addListSource(ListSource(name: "social", url: "https://lists.example/social.txt", addedByUID: 1000, addedByGID: 1000, added: now))
        #expect(await SharedFixture.eventually { await b.engine.listSources.map(\.name) == ["social"] }, "B never heard of the list")
        #expect(told.withLock { $0 } >= 1, "B's lists controller was not told")
        let heard = try #require(await b.engine.listSources.first)
        #expect(heard.addedOn == "a" && heard.addedByUID == 1000 && heard.url == "https://lists.example/social.txt")

        // Both helpers add "news" at once, from different URLs: one of them adds it.
        async let first: Bool = { do { try await a.engine.addListSource(ListSource(name: "news", url: "https://a.example/n", added: now)); return true } catch { return false } }()
        async let second: Bool = { do { try await b.engine.addListSource(ListSource(name: "news", url: "https://b.example/n", added: now)); return true } catch { return false } }()
        let outcomes = await [first, second]
        #expect(outcomes.filter { $0 }.count == 1, "\(outcomes)")
        #expect(try db.query("SELECT count(*) FROM household_lists WHERE name = 'news'") == "1")
        // Adding a URL the household has under another name is refused with the existing name.
        await #expect(throws: EngineError.self) {
            try await b.engine.addListSource(ListSource(name: "other", url: "https://lists.example/social.txt", added: now))
        }

        // Removed through B: A hears it; removing it again is no household change.
        #expect(try await b.engine.removeListSource("social"))
        #expect(await SharedFixture.eventually { await a.engine.listSources.map(\.name) == ["news"] }, "A never heard of the removal")
        #expect(try await a.engine.removeListSource("social") == false)
        #expect(try db.query("SELECT count(*) FROM events WHERE message LIKE 'Added list social%' OR message LIKE 'Removed list social%'") == "2")

        // A row no `lists add` could write (a terminal escape in its URL), put in by hand: the
        // helper refuses the read, saying which row, and keeps the rules and lists in force.
        _ = try db.query(#"INSERT INTO household_lists (name, url, added) VALUES ('odd', E'https://x.example/\033[2J', 0)"#)
        #expect(await b.engine.reloadFromStore() == false)
        #expect(await b.engine.listSources.map(\.name) == ["news"])
    }

    /// `lists update NAME` on a helper that has not fetched the household's list yet downloads it
    /// now rather than answering "no list named" (its refresh service is not running here).
    @Test func lists_update_on_the_other_helper_before_its_first_download_fetches_the_households_list() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let folder = NSTemporaryDirectory() + "scrolloff-pg-update-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/state", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Read on B with a member's rights (added through A): a world-readable file in a member folder.
        chmod(folder, 0o755)
        let file = folder + "/doom.txt"
        try (0..<20).map { "doom\($0).example.com" }.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        let lists = ListsController(stateDirectory: folder + "/state",
                                    configuration: ListsConfiguration(sourceRules: ListSourceRules(memberFolders: [folder])),
                                    clock: { clock.read().wall }, logger: Logger(label: "pg-lists-b"))
        await lists.setGuard(.rules(of: b.engine))

        try await a.engine.addListSource(ListSource(name: "doom", url: "file://" + file, addedByUID: 1000, addedByGID: 1000,
                                                    added: await a.engine.trustedNow()))
        #expect(await SharedFixture.eventually { await b.engine.listSources.map(\.name) == ["doom"] }, "B never heard of the list")
        let results = try await lists.update(name: "doom")
        #expect(results.map(\.outcome) == [RefreshOutcome.updated], "\(results)")
        #expect(FileManager.default.fileExists(atPath: lists.store.copyPath(for: try ListName("doom"))))
        // A name the household does not have is still "no list named".
        await #expect(throws: ControlFailure.self) { _ = try await lists.update(name: "nothing") }
    }

    /// `[lists] max_lists` holds for the household however its helpers race: B has not heard of
    /// A's list (it does not listen, as a helper whose notification is still on its way), so its
    /// own count passes the bound; the bound is asked again in the commit's decision.
    @Test func max_lists_holds_when_two_helpers_add_a_list_each_on_counts_read_before_the_others_commit() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let folder = try ListFolder(files: ["one", "two"])
        defer { folder.remove() }
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock, listening: false)
        defer { a.listener?.cancel() }
        let bound = ListBound(maxLists: 1)
        let listsA = await folder.controller(of: a.engine, node: "a", clock: clock, bound: bound)
        let listsB = await folder.controller(of: b.engine, node: "b", clock: clock, bound: bound)

        _ = try await listsA.add(AddListRequest(url: folder.url("one"), name: "one"))
        var refusal: ControlFailure?
        do throws(ControlFailure) { _ = try await listsB.add(AddListRequest(url: folder.url("two"), name: "two")) } catch { refusal = error }
        #expect(try db.query("SELECT name FROM household_lists ORDER BY name") == "one")
        #expect(refusal?.error.message.contains("[lists] max_lists") == true, "\(String(describing: refusal))")
        // Nothing of the refused list stays on B: no copy, and the household's list is still B's to fetch.
        #expect(!FileManager.default.fileExists(atPath: listsB.store.copyPath(for: try ListName("two"))))
    }

    /// Each helper keeps to its own `[lists] max_lists` for the copies it holds: a household list
    /// past B's bound (A allows more) is not fetched on B, and says why, as a list past max_names is not.
    @Test func a_helper_fetches_no_more_of_the_households_lists_than_its_own_max_lists() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let folder = try ListFolder(files: ["one", "two"])
        defer { folder.remove() }
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        let listsA = await folder.controller(of: a.engine, node: "a", clock: clock, bound: ListBound(maxLists: 8))
        let listsB = await folder.controller(of: b.engine, node: "b", clock: clock, bound: ListBound(maxLists: 1))
        _ = try await listsA.add(AddListRequest(url: folder.url("one"), name: "one"))
        _ = try await listsA.add(AddListRequest(url: folder.url("two"), name: "two"))
        #expect(await SharedFixture.eventually { await b.engine.listSources.count == 2 }, "B never heard of A's lists")

        let results = try await listsB.update(name: nil)
        #expect(results.map(\.outcome) == [RefreshOutcome.updated, RefreshOutcome.failed], "\(results)")
        #expect(results.last?.error?.message.contains("[lists] max_lists") == true, "\(results)")
        let held = await listsB.store.allMetadata().filter(\.hasCopy).map(\.name.rawValue)
        #expect(held == ["one"])
    }
}

extension SharedHouseholdListsTests {
    /// Two helpers that each had a list named `news` before they shared a store, from different
    /// URLs: the second to carry its lists in keeps its list under a free name rather than having
    /// its copy quietly replaced by the first's.
    @Test func a_list_whose_name_the_household_gives_another_url_is_carried_in_under_a_free_name_not_lost() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let folder = try ListFolder(files: ["one", "two"])
        defer { folder.remove() }
        // Before: each helper alone, with its own list `news`.
        for (node, file) in [("a", "one"), ("b", "two")] {
            let alone = ListsController(stateDirectory: "\(folder.path)/\(node)", clock: { Instant(millisecondsSince1970: 1_795_003_200_000) },
                                        logger: Logger(label: "pg-lists-alone"))
            _ = try await alone.add(AddListRequest(url: folder.url(file), name: "news"))
        }
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        let listsA = await folder.controller(of: a.engine, node: "a", clock: clock, bound: ListBound())
        _ = await listsA.refreshDueLists()
        #expect(await SharedFixture.eventually { await b.engine.listSources.count == 1 }, "B never heard of A's list")
        let listsB = await folder.controller(of: b.engine, node: "b", clock: clock, bound: ListBound())
        _ = await listsB.refreshDueLists()

        #expect(try db.query("SELECT name, url FROM household_lists ORDER BY name") == "news|\(folder.url("one"))\nnews-2|\(folder.url("two"))")
        let copies = await listsB.store.allMetadata().filter(\.hasCopy).map { "\($0.name)|\($0.url)" }
        #expect(copies == ["news|\(folder.url("one"))", "news-2|\(folder.url("two"))"])
    }
}

extension SharedHouseholdListsTests {
    /// A list added through A records the adder's group as A numbers it; here that number is
    /// root's group. B reads another helper's source as the adder's uid with the groups B gives
    /// that uid (daemon's, 1), so a file only root's group may read stays unread.
    @Test func a_list_added_through_the_other_helper_is_read_with_this_machines_groups_of_the_adder_not_the_recorded_group() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let folder = try ListFolder(files: ["secret"])
        defer { folder.remove() }
        chmod("\(folder.path)/secret.txt", 0o640) // root:root
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        let listsB = await folder.controller(of: b.engine, node: "b", clock: clock, bound: ListBound())
        try await a.engine.addListSource(ListSource(name: "secret", url: folder.url("secret"), addedByUID: 1, addedByGID: 0,
                                                    added: await a.engine.trustedNow()))
        #expect(await SharedFixture.eventually { await b.engine.listSources.map(\.name) == ["secret"] }, "B never heard of the list")

        let results = try await listsB.update(name: "secret")
        #expect(results.map(\.outcome) == [RefreshOutcome.failed], "\(results)")
        #expect(!FileManager.default.fileExists(atPath: listsB.store.copyPath(for: try ListName("secret"))))
    }
}

extension SharedHouseholdListsTests {
    /// The rows `store copy` makes of a helper alone's lists name no helper. Another helper reads
    /// such a list as another helper's (root there is nobody here), not as its own
    /// administrator's; the helper holding the list's record claims the row at its carry-in.
    @Test func a_copied_row_naming_no_helper_is_read_as_another_helpers_and_claimed_by_the_helper_holding_its_record() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let folder = try ListFolder(files: ["mine"])
        defer { folder.remove() }
        chmod("\(folder.path)/mine.txt", 0o600) // root's alone
        // A, alone before, added it as root: its record here, and the row `store copy` made of it.
        let alone = ListsController(stateDirectory: "\(folder.path)/a", clock: { Instant(millisecondsSince1970: 1_795_003_200_000) },
                                    logger: Logger(label: "pg-lists-alone"))
        _ = try await alone.add(AddListRequest(url: folder.url("mine"), name: "mine"))
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        _ = try db.query("INSERT INTO household_lists (name, url, added_by_uid, added_by_gid, added, added_on) VALUES ('mine', '\(folder.url("mine"))', 0, 0, 0, '')")
        _ = await a.engine.reloadFromStore()
        _ = await b.engine.reloadFromStore()

        let listsB = await folder.controller(of: b.engine, node: "b", clock: clock, bound: ListBound())
        let onB = try await listsB.update(name: "mine")
        #expect(onB.map(\.outcome) == [RefreshOutcome.failed], "\(onB)")
        #expect(!FileManager.default.fileExists(atPath: listsB.store.copyPath(for: try ListName("mine"))))

        let listsA = await folder.controller(of: a.engine, node: "a", clock: clock, bound: ListBound())
        _ = await listsA.refreshDueLists()
        #expect(try db.query("SELECT added_on FROM household_lists WHERE name = 'mine'") == "a")
        let onA = try await listsA.update(name: "mine")
        #expect(onA.map(\.outcome) != [RefreshOutcome.failed], "\(onA)")
    }
}

/// A folder of small world-readable list files, and lists controllers on it for the helpers of a test.
private struct ListFolder {
    let path = NSTemporaryDirectory() + "scrolloff-pg-words-\(UUID().uuidString.prefix(8))"

    init(files: [String]) throws {
        for node in ["a", "b"] { try FileManager.default.createDirectory(atPath: "\(path)/\(node)", withIntermediateDirectories: true) }
        chmod(path, 0o755)
        for file in files {
            try (0..<5).map { "\(file)\($0).example.com" }.joined(separator: "\n").write(toFile: "\(path)/\(file).txt", atomically: true, encoding: .utf8)
            chmod("\(path)/\(file).txt", 0o644)
        }
    }

    func url(_ file: String) -> String { "file://\(path)/\(file).txt" }

    func controller(of engine: HelperEngine, node: String, clock: HouseholdClock, bound: ListBound) async -> ListsController {
        let lists = ListsController(stateDirectory: "\(path)/\(node)",
                                    configuration: ListsConfiguration(sourceRules: ListSourceRules(memberFolders: [path]), bound: bound),
                                    clock: { clock.read().wall }, logger: Logger(label: "pg-lists-\(node)"))
        await lists.setGuard(.rules(of: engine))
        return lists
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
