import ControlAPI
import ControlServer
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
}
