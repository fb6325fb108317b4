@testable import Engine
import Foundation
import PostgresStore
import ScrollOffCore
import Store
import TestSupport
import Testing

/// Two helpers left with one node name (two machines both `raspberrypi`), and a `LISTEN`
/// connection that dies: both are noticed, said in `doctor` (the store's integrity check), and a
/// same-named helper's changes still arrive by notification.
@Suite(.serialized) struct SharedNodeNameTests {
    static func stateFolder(_ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-pg-node-\(name)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func a_second_helper_with_the_same_node_name_is_refused_at_start_and_a_quick_restart_of_the_first_is_not() throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let kitchen = try Self.stateFolder("kitchen")
        let hall = try Self.stateFolder("hall")
        defer { try? FileManager.default.removeItem(atPath: kitchen); try? FileManager.default.removeItem(atPath: hall) }
        let first = try PostgresStateStore(location: db.location, node: "raspberrypi")
        try first.claimNode(stateDirectory: kitchen)
        #expect(try first.heartbeat() != Int64.min)

        let other = try PostgresStateStore(location: db.location, node: "raspberrypi")
        var refusal = ""
        do {
            try other.claimNode(stateDirectory: hall)
        } catch {
            refusal = "\(error)"
        }
        #expect(refusal.hasPrefix("node name \"raspberrypi\" was heartbeated ") && refusal.contains(" s ago by another helper, a local socket"),
                "\(refusal)")
        #expect(refusal.contains("instance \(first.instance)") && refusal.contains("instance \(other.instance)"), "\(refusal)")
        #expect(refusal.contains("set `[store] node = \"...\"` to a distinct name on each machine"), "\(refusal)")
        #expect(!FileManager.default.fileExists(atPath: hall + "/" + PostgresStateStore.instanceFileName), "a refused helper kept an instance id")

        // The kitchen helper restarted at once (its old process gone, its heartbeat fresh): its
        // state folder names the previous instance, so it takes the name back.
        let restarted = try PostgresStateStore(location: db.location, node: "raspberrypi")
        try restarted.claimNode(stateDirectory: kitchen)
        #expect(try String(contentsOfFile: kitchen + "/" + PostgresStateStore.instanceFileName, encoding: .utf8) == restarted.instance + "\n")
        // … and the hall's still may not, nor may an old id taken over once more.
        #expect(throws: NodeClaimError.self) { try other.claimNode(stateDirectory: hall) }
        #expect(throws: NodeClaimError.self) { try PostgresStateStore(location: db.location, node: "raspberrypi").claimNode(previousInstance: first.instance) }
        // Another name is another helper's own.
        try PostgresStateStore(location: db.location, node: "hall").claimNode(stateDirectory: hall)
    }

    @Test func two_running_helpers_that_share_a_node_name_both_say_so_in_doctor() throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let holder = try PostgresStateStore(location: db.location, node: "raspberrypi")
        try holder.claimNode(previousInstance: "")
        // One that never claimed (as one that started while the holder was cut off from the
        // database would be, once both are back): its heartbeat finds the name taken and yields.
        let late = try PostgresStateStore(location: db.location, node: "raspberrypi")
        try late.heartbeat()
        let lateProblems = try late.integrityCheck().problems.joined(separator: "\n")
        #expect(lateProblems.contains("another helper used node name \"raspberrypi\" too") && lateProblems.contains("which yields the name to it"),
                "\(lateProblems)")
        #expect(lateProblems.contains("instance \(holder.instance)") && lateProblems.contains("a distinct name on each machine"))
        // The holder keeps its row, and hears of the other at its next heartbeat.
        try holder.heartbeat()
        let holderProblems = try holder.integrityCheck().problems.joined(separator: "\n")
        #expect(holderProblems.contains("another helper used node name \"raspberrypi\" too: a local socket (host")
                && holderProblems.contains("instance \(late.instance)") && !holderProblems.contains("yields"), "\(holderProblems)")
        #expect(try db.query("SELECT instance FROM nodes WHERE node = 'raspberrypi'") == holder.instance)
    }

    @Test func a_change_made_through_a_helper_sharing_this_node_name_arrives_by_notification() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("raspberrypi", on: db, clock: clock)
        let b = try await SharedFixture.node("raspberrypi", on: db, clock: clock)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        // Until B listens, a change may reach it by the version check; the second is the one heard.
        _ = try await a.engine.block(["tiktok"])
        #expect(await SharedFixture.eventually { await b.engine.blocks("www.tiktok.com") })
        #expect(await SharedFixture.eventually { b.store.listenerHealth.withLockedValue { $0.backendPID != nil } })
        try await Task.sleep(for: .milliseconds(200))
        _ = try await a.engine.block(["instagram"])
        #expect(await SharedFixture.eventually(seconds: 3) { await b.engine.blocks("www.instagram.com") })
        #expect(await SharedFixture.eventually(seconds: 3) { b.store.counters.notifications >= 1 },
                "B dropped A's notification as its own: \(b.store.counters)")
    }

    @Test func a_killed_listen_connection_is_reported_by_doctor_and_reconnected() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock)
        let b = try await SharedFixture.node("b", on: db, clock: clock, listening: false)
        defer { a.listener?.cancel() }
        #expect(await SharedFixture.eventually { a.store.listenerHealth.withLockedValue { $0.backendPID != nil } })
        let killed = try #require(a.store.listenerHealth.withLockedValue { $0.backendPID })
        #expect(try a.store.integrityCheck().problems.isEmpty)
        #expect(try db.query("SELECT pg_terminate_backend(\(killed))") == "t")

        #expect(await SharedFixture.eventually {
            a.store.listenerHealth.withLockedValue { $0.backendPID != killed && $0.downSince == nil && $0.lastDownMilliseconds != nil }
        }, "the listener never came back: \(a.store.listenerHealth.withLockedValue { $0 })")
        let counters = a.store.counters
        #expect(counters.listenerFailures == 1 && counters.listenerReconnects == 1, "\(counters)")
        let problems = try a.store.integrityCheck().problems.joined(separator: "\n")
        #expect(problems.contains("the household database's LISTEN connection was lost 1 time, the last "), "\(problems)")
        #expect(problems.contains("changes from the other helpers arrive only by the once-a-second version check"), "\(problems)")
        // Listening again: B's next change arrives by notification.
        let before = a.store.counters.notifications
        _ = try await b.engine.block(["tiktok"])
        #expect(await SharedFixture.eventually(seconds: 3) { a.store.counters.notifications > before })
        #expect(await a.engine.blocks("www.tiktok.com"))
    }
}
