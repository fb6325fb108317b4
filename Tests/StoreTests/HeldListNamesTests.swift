import Foundation
import GRDB
import ScrollOffCore
@testable import Store
import Testing

/// The names a lock holds of a list, the household's (`held_list_names`): `load` carries the
/// summary alone, the names are read on their own, a release keeps the row with no names and a
/// later revision, `lists rm` takes the row with the list, and an existing file gains the table.
@Suite struct HeldListNamesTests {
    static func held(_ rules: [String], revision: Int64, until: Instant?, name: String = "doom") -> HeldListNames {
        HeldListNames(summary: HeldListSummary(name: name, count: rules.count, revision: revision, until: until,
                                               reason: "doom stays blocked for 2 h more", since: Fixture.start),
                      rules: rules)
    }

    @Test func held_names_round_trip_with_the_summary_in_the_loaded_state_and_the_names_apart() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        #expect(try store.heldListNames("doom") == nil)
        let doom = ListSource(name: "doom", url: "file:///srv/lists/doom.txt", added: Fixture.start)
        let rules = ["||doom15.example.com^", "||doom16.example.com^", "|exact.example.com^", "@@||kept.example.com^"]
        let held = Self.held(rules, revision: 7, until: Fixture.start + .hours(2))
        try store.commit(StateChange([.saveListSource(doom), .saveHeldListNames(held)]), anchor: Fixture.anchor(Fixture.start))

        let reopened = try Store(directory: dir.stateDirectory)
        #expect(try reopened.load().heldLists == [held.summary])
        #expect(try reopened.heldListNames("doom") == held)

        // Let go: the row stays, with no names and a later revision, so a helper's file of the old
        // names is never taken for a later hold's.
        var gone = held.summary
        gone.count = 0
        gone.revision = 8
        gone.until = nil
        try store.commit(StateChange([.saveHeldListNames(HeldListNames(summary: gone, rules: []))]), anchor: Fixture.anchor(Fixture.start))
        #expect(try store.load().heldLists == [gone])
        #expect(try store.heldListNames("doom")?.rules == [])

        // Held again, then the list removed: its held names go with it.
        try store.commit(StateChange([.saveHeldListNames(Self.held(["||a.example^"], revision: 9, until: nil))]), anchor: Fixture.anchor(Fixture.start))
        try store.commit(StateChange([.removeListSource(name: "doom")]), anchor: Fixture.anchor(Fixture.start))
        #expect(try store.load().heldLists.isEmpty)
        #expect(try store.heldListNames("doom") == nil)
    }

    @Test func a_row_whose_count_disagrees_with_its_names_or_is_negative_is_refused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        #expect(throws: StoreError.self) {
            try store.write { db in
                try db.execute(sql: "INSERT INTO held_list_names (name, rules, name_count, revision, held_since) VALUES ('x', '', 3, 1, 0)")
            }
        }
        #expect(throws: StoreError.self) {
            try store.write { db in
                try db.execute(sql: "INSERT INTO held_list_names (name, rules, name_count, revision, held_since) VALUES ('x', '||a^', -1, 1, 0)")
            }
        }
        #expect(try store.load().heldLists.isEmpty)
    }

    @Test func a_v5_database_gains_the_held_list_names_table_empty_and_keeps_its_lists() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.stateDirectory, withIntermediateDirectories: true)
        do {
            let old = try DatabaseQueue(path: dir.databasePath)
            try Schema.migrator.migrate(old, upTo: "v5 household lists")
            try old.write { db in
                try db.execute(sql: "INSERT INTO household_lists (name, url, added) VALUES ('doom', 'https://lists.example/doom.txt', 0)")
            }
        }
        let store = try Store(directory: dir.stateDirectory)
        let loaded = try store.load()
        #expect(loaded.listSources.map(\.name) == ["doom"])
        #expect(loaded.heldLists.isEmpty)
        #expect(try store.read { db in try db.tableExists("held_list_names") })
    }
}
