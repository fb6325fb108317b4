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

    /// A row no `lists add` could have written (by hand, or by another helper of a shared store)
    /// is refused by name at load, before any helper makes a file name of it or prints its URL.
    @Test(arguments: [
        ("../../etc/cron.d/x", "https://x.example/l", "is not a list name"),
        ("Social", "https://x.example/l", "is not a list name"),
        (String(repeating: "a", count: 65), "https://x.example/l", "is not a list name"),
        ("odd", "https://x.example/" + String(repeating: "a", count: 4096), "more than 2048"),
        ("odd", "https://x.example/\u{1B}]0;owned\u{07}\u{1B}[2J", "control character U+1B"),
        ("odd", "https://x.example/l", "not a helper's name"),
    ])
    func a_row_with_a_hostile_name_url_or_helper_is_refused_by_name(name: String, url: String, words: String) throws {
        // The last case's URL is fine; its helper name carries a terminal escape.
        let node = words == "not a helper's name" ? "resolver-1\u{1B}[2J" : ""
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        try store.write { db in
            try db.execute(sql: "INSERT INTO household_lists (name, url, added, added_on) VALUES (?, ?, 0, ?)", arguments: [name, url, node])
        }
        do throws(StoreError) {
            _ = try store.load()
            Issue.record("a household_lists row named \(name.prefix(20)) with a \(url.utf8.count)-byte URL was loaded")
        } catch {
            guard case .invalidRow(let table, let detail) = error else { Issue.record("\(error)"); return }
            #expect(table == "household_lists" && detail.contains(words), "\(detail)")
            #expect(detail.utf8.count < 300 && !detail.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(detail)")
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
