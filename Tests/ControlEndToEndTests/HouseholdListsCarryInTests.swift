import ControlAPI
import ControlServer
import Engine
import Foundation
import ScrollOffCore
import Store
import Testing

extension ControlEndToEnd {
/// Which lists exist is kept in the state (SQLite here); a helper's lists from before, whose only
/// record was the metadata file beside each copy, are carried into it once, losing none, and a
/// list the state no longer has loses its copy.
@Suite
struct HouseholdListsCarryInTests {
    @Test func a_helpers_lists_from_before_are_carried_into_its_state_once_and_a_list_the_state_drops_loses_its_copy() async throws {
        let first = try await EngineServer()
        let directory = first.directory
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/doom.txt"
        try writeList(file, names: 20, prefix: "doom")
        let added = try await first.cli(["lists", "add", "file://" + file, "--name", "doom"])
        #expect(added.status == 0, "\(added)")
        #expect(await first.engine.listSources.map(\.name) == ["doom"], "lists add keeps the list in the state")
        await first.stop(removing: false)

        // As a build from before left it: the copy and its record, nothing in the database.
        let state = directory + "/state"
        try? FileManager.default.removeItem(atPath: state + "/lists/.carried-into")
        do {
            let store = try Store(directory: state)
            let loaded = try store.load()
            try store.commit(StateChange([.removeListSource(name: "doom")]), anchor: try #require(loaded.anchor))
            #expect(try store.load().listSources.isEmpty)
        }

        let server = try await EngineServer(reusing: directory)
        defer { Task { await server.stop() } }
        let refresh = Task { try await server.control.refresh.run() }
        defer { refresh.cancel() }
        var carried: [ListSource] = []
        for _ in 0..<100 where carried.isEmpty {
            carried = await server.engine.listSources
            if carried.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(carried.map(\.name) == ["doom"], "the list from before was not carried in")
        #expect(carried.first?.url == "file://" + file && carried.first?.addedByUID == getuid())
        #expect(FileManager.default.fileExists(atPath: state + "/lists/doom.list"), "its copy stays")
        #expect(try await server.cli(["block", "doom"]).status == 0)
        #expect(await server.blocks("doom3.example.com"))

        // Once carried in, a list the state no longer has (another helper removed it) loses its copy here.
        #expect(try await server.cli(["unblock", "doom"]).status != 0, "held by the cooldown")
        server.time.shift(.hours(3))
        #expect(try await server.cli(["unblock", "doom"]).status == 0)
        #expect(try await server.engine.removeListSource("doom"))
        var gone = false
        for _ in 0..<100 where !gone {
            gone = !FileManager.default.fileExists(atPath: state + "/lists/doom.list")
            if !gone { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(gone, "the copy of a list the state dropped stayed")
        #expect(try await server.cli(["lists", "list"]).stdout.contains("doom") == false)
    }
}
}
