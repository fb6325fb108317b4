@testable import Engine
import Foundation
import PostgresStore
import ScrollOffCore
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
}
