import Foundation
import GRDB
import ScrollOffCore
@testable import Store
import Testing

/// Which lists the household has, kept in the state (`household_lists`): saved, replaced and
/// removed by a commit, read back by `load`, and added to an existing file by its migration.
@Suite struct HouseholdListsTests {
    @Test func a_list_source_is_saved_replaced_removed_and_read_back_after_reopening() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let social = ListSource(name: "social", url: "https://lists.example/social.txt", addedByUID: 1000, addedByGID: 100,
                                added: Fixture.start, addedOn: "resolver-1")
        let ads = ListSource(name: "ads", url: "file:///srv/lists/ads.txt", added: Fixture.start + .minutes(1))
        try store.commit(StateChange([.saveListSource(social), .saveListSource(ads)]), anchor: Fixture.anchor(Fixture.start))
        #expect(try Store(directory: dir.stateDirectory).load().listSources == [ads, social])

        var moved = social
        moved.url = "https://lists.example/social-v2.txt"
        try store.commit(StateChange([.saveListSource(moved), .removeListSource(name: "ads")]), anchor: Fixture.anchor(Fixture.start))
        #expect(try Store(directory: dir.stateDirectory).load().listSources == [moved])
    }

    @Test func removing_a_list_the_household_does_not_have_is_refused_and_changes_nothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let social = ListSource(name: "social", url: "https://lists.example/social.txt", added: Fixture.start)
        try store.commit(StateChange([.saveListSource(social)]), anchor: Fixture.anchor(Fixture.start))
        #expect(throws: StoreError.invalidChange("there is no list named gone")) {
            try store.commit(StateChange([.removeListSource(name: "social"), .removeListSource(name: "gone")]), anchor: Fixture.anchor(Fixture.start))
        }
        // The whole commit rolled back: the first removal too.
        #expect(try store.load().listSources == [social])
    }

    @Test func a_row_whose_adder_is_not_a_user_id_is_refused_by_name() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        try store.write { db in
            try db.execute(sql: "INSERT INTO household_lists (name, url, added_by_uid, added) VALUES ('odd', 'https://x.example/l', -1, 0)")
        }
        #expect(throws: StoreError.invalidRow(table: "household_lists", detail: "added_by_uid -1 of list odd is not a user or group id")) {
            _ = try store.load()
        }
    }

    @Test func a_v4_database_gains_the_household_lists_table_empty_and_keeps_its_rows() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.stateDirectory, withIntermediateDirectories: true)
        do {
            let old = try DatabaseQueue(path: dir.databasePath)
            try Schema.migrator.migrate(old, upTo: "v4 allowances and pauses")
            try old.write { db in
                try db.execute(sql: "INSERT INTO profiles (name, time_zone, preset, owner_uids) VALUES ('kids', 'UTC', 'strict', '[1000]')")
            }
        }
        let store = try Store(directory: dir.stateDirectory)
        let loaded = try store.load()
        #expect(loaded.profile(named: "kids") != nil)
        #expect(loaded.listSources.isEmpty)
        #expect(try store.read { db in try db.tableExists("household_lists") })
    }
}
