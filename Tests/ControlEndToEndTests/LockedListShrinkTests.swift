import ControlAPI
import ControlServer
import Foundation
import Helper
import ListFetch
import Logging
import ScrollOffCore
import Testing

/// A refresh timer on the verb tests' stepped clock: sleeps in short real steps until the shifted
/// trusted clock reaches the deadline, so `time.shift` wakes the refresh service as time passing would.
struct SteppedRefreshTimer: RefreshTimer {
    let time: SteppedTimeSource

    func now() -> Instant { time.now }

    func sleep(until deadline: Instant) async throws {
        while time.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }
}

extension ControlEndToEnd {
/// SPEC §3, a list under a lock never shrinks: a list blocked under a 2 h cooldown, refreshed from its URL
/// with one name left, said "updated, 1 name" and opened the other names, a way around the
/// cooldown that `lists rm` and `unblock` refuse. SPEC §3: a list held by a lock never loses names
/// by a refresh until the lock ends; new names apply at once.
@Suite
struct LockedListShrinkTests {
    /// The list with `names` numbered names and `extra` names, dated after every earlier write so
    /// a conditional GET sees the change (see `writeList`).
    static func write(_ path: String, names: Int, extra: [String] = []) throws {
        try writeList(path, names: names, prefix: "doom")
        // Keep the date `writeList` gave (later than every list written before in this process).
        let dated = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate]
        let text = try String(contentsOfFile: path, encoding: .utf8) + extra.map { $0 + "\n" }.joined()
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        if let dated { try FileManager.default.setAttributes([.modificationDate: dated], ofItemAtPath: path) }
    }

    @Test func a_blocked_list_refreshed_with_one_name_left_keeps_the_others_blocked_until_the_cooldown_ends() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let webRoot = server.directory + "/web"
        try FileManager.default.createDirectory(atPath: webRoot, withIntermediateDirectories: true)
        try writeList(webRoot + "/doom.txt", names: 200, prefix: "doom")
        let web = try await ListHTTPServer.start(directory: webRoot)
        defer { web.stop() }
        #expect(try await server.cli(["lists", "add", web.url("doom.txt"), "--name", "doom"]).status == 0)
        #expect(try await server.cli(["block", "doom", "--reason", "sleep first"]).status == 0)

        // The source now lists one of its names and one new one.
        try Self.write(webRoot + "/doom.txt", names: 1, extra: ["fresh.example.net"])
        let update = try await server.cli(["lists", "update", "doom"])
        #expect(update.status == 0, "\(update)")
        #expect(update.stdout.contains("updated, 2 names"), "\(update.stdout)")
        #expect(update.stdout.contains("199 names dropped by a refresh stay blocked until 14:00"), "\(update.stdout)")
        #expect(update.stdout.contains("Your reason") || update.stdout.contains("cooldown"), "\(update.stdout)")
        for name in ["doom3.example.com", "www.doom199.example.com", "doom0.example.com"] {
            #expect(await server.blocks(name), "\(name) stays blocked under the cooldown")
        }
        #expect(await server.blocks("fresh.example.net"), "a new name applies at once")

        let listed = try await server.json(["lists", "list"])
        let doom = try #require((listed["lists"] as? [[String: Any]])?.first)
        let held = try #require(doom["held"] as? [String: Any], "\(doom)")
        #expect(held["count"] as? Int == 199)
        let until = try #require((held["until"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        #expect(abs(until.timeIntervalSince((EngineServer.noon + .hours(2)).date)) <= 2, "\(until)")
        #expect(doom["entry_count"] as? Int == 2)
        let human = try await server.cli(["lists", "list"])
        #expect(human.stdout.contains("199 names dropped by a refresh stay blocked until 14:00"), "\(human.stdout)")

        // Nothing to do by hand: the refresh service releases them at the lock's end.
        let service = ListRefreshService(lists: server.control.lists, timer: SteppedRefreshTimer(time: server.time),
                                         logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(await server.blocks("doom3.example.com"), "not a moment early")
        server.time.shift(.hours(2) + .minutes(1))
        #expect(await eventually { await server.blocks("doom3.example.com") == false }, "the dropped names open once the cooldown is over")
        #expect(await server.blocks("doom0.example.com"))
        #expect(await server.blocks("fresh.example.net"))
        let after = try await server.json(["lists", "list"])
        #expect((after["lists"] as? [[String: Any]])?.first?["held"] is NSNull)
    }

    @Test func a_list_a_running_curfew_names_keeps_its_names_through_a_refresh_until_the_curfew_ends() async throws {
        let server = try await EngineServer(preset: .flexible)
        defer { Task { await server.stop() } }
        let file = server.directory + "/doom.txt"
        try writeList(file, names: 20, prefix: "doom")
        #expect(try await server.cli(["lists", "add", "file://" + file, "--name", "doom"]).status == 0)
        #expect(try await server.cli(["schedule", "add", "afternoon", "--from", "13:00", "--to", "15:00", "--curfew",
                                      "--entries", "doom"]).status == 0)
        server.time.shift(.minutes(90)) // 13:30, inside the curfew; the 30 min cooldown is over
        try Self.write(file, names: 5)
        let update = try await server.cli(["lists", "update", "doom"])
        #expect(update.stdout.contains("15 names dropped by a refresh stay blocked until 15:00"), "\(update.stdout)")
        #expect(await server.blocks("doom12.example.com"))

        server.time.shift(.minutes(95)) // 15:05: the curfew is over, the next refresh applies the new copy
        let later = try await server.cli(["lists", "update", "doom"])
        #expect(later.status == 0, "\(later)")
        #expect(!later.stdout.contains("stay blocked"), "\(later.stdout)")
        #expect(try await server.cli(["schedule", "rm", "afternoon"]).status == 0)
        #expect(try await server.cli(["block", "doom"]).status == 0)
        #expect(await server.blocks("doom12.example.com") == false)
        #expect(await server.blocks("doom4.example.com"))
    }

    @Test func a_list_no_rule_holds_shrinks_at_once() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let file = server.directory + "/doom.txt"
        try writeList(file, names: 20, prefix: "doom")
        #expect(try await server.cli(["lists", "add", "file://" + file, "--name", "doom"]).status == 0)
        try Self.write(file, names: 1)
        let update = try await server.cli(["lists", "update", "doom"])
        #expect(update.stdout.contains("updated, 1 name"), "\(update.stdout)")
        #expect(!update.stdout.contains("stay blocked"), "\(update.stdout)")
        let listed = try await server.json(["lists", "list"])
        #expect((listed["lists"] as? [[String: Any]])?.first?["held"] is NSNull)
    }
}
}
