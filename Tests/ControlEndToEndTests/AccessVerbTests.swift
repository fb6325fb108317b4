#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// Profiles and who may act on them (SPEC §9, §11), usage errors and an unreachable helper
/// (SPEC §13 exit codes), and the one list system feeding the engine.
@Suite
struct AccessVerbTests {
    @Test func a_profile_has_its_own_rules_and_is_chosen_with_profile() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let added = try await server.cli(["profile", "add", "kids", "--clients", "192.168.1.20/32,fd00::/64"])
        #expect(added.status == 0, "\(added)")
        let profiles = try await server.json(["profile", "list"])
        let rows = try #require(profiles["profiles"] as? [[String: Any]])
        #expect(rows.compactMap { $0["name"] as? String } == ["default", "kids"])
        #expect(rows.last?["clients"] as? [String] == ["192.168.1.20/32", "fd00::/64"])

        let blocked = try await server.cli(["block", "tiktok", "--profile", "kids"])
        #expect(blocked.status == 0, "\(blocked)")
        let kids = try await server.json(["status", "--profile", "kids"])
        #expect((kids["entries"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["tiktok"])
        #expect(kids["profile"] as? String == "kids")
        let main = try await server.json(["status"])
        #expect((main["entries"] as? [Any])?.isEmpty == true)
        // Each profile starts with its own starter credit (SPEC §4, §9).
        #expect(try await server.json(["wallet", "--profile", "kids"])["balance_seconds"] as? Int == 120)

        let unknown = try await server.cli(["status", "--profile", "nosuch"])
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stderr.contains("There is no profile 'nosuch'"))
        let badClients = try await server.cli(["profile", "add", "guests", "--clients", "not-a-network"])
        #expect(badClients.status == 2, "\(badClients)")
    }

    @Test func a_caller_who_is_neither_owner_nor_in_the_group_gets_403_with_a_reason() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        let arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", scrolloffBinary, "status", "--socket", server.socketPath]
        let refused = try await run("/usr/bin/setpriv", arguments, environment: ["PATH": "/usr/bin:/bin", "NO_COLOR": "1"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("may not act on profile 'default'"), "\(refused.stderr)")
        let asJSON = try await run("/usr/bin/setpriv", arguments + ["--json"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(try decode(ControlErrorEnvelope.self, asJSON.stdout).error.code == "forbidden")
        // The same socket answers root (this test's user) as usual.
        #expect(try await server.cli(["status"]).status == 0)
        let raw = try await curl(server.socketPath, "GET", "/v1/wallet", asUser: 65534)
        #expect(raw.status == 403)
    }

    @Test(arguments: [
        ["use"],
        ["use", "instagram", "--for", "10x"],
        ["focus", "soon"],
        ["focus", "30s5m"],
        ["block"],
        ["unblock"],
        ["schedule", "add", "evenings", "--from", "21:00"],
        ["schedule", "add", "evenings", "--from", "21:00", "--to", "07:00"],
        ["schedule", "add", "evenings", "--from", "21:00", "--to", "07:00", "--strict", "--entries", "x"],
        ["stats", "--day", "--week"],
        ["export"],
        ["plan", "archive", "first"],
        ["profile", "add", "kids"],
        ["peek"],
        ["frobnicate"],
    ])
    func usage_errors_exit_2_without_asking_the_helper(arguments: [String]) async throws {
        let result = try await cli(arguments, socket: "/tmp/soc-nowhere/ctl.sock")
        #expect(result.status == 2, "\(result)")
        #expect(!result.stderr.isEmpty)
    }

    @Test func names_the_helper_does_not_know_are_usage_errors() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let misspelt = try await server.cli(["block", "instagrm"])
        #expect(misspelt.status == 2, "\(misspelt)")
        #expect(misspelt.stderr.contains("scrolloff services"))
        let badTime = try await server.cli(["schedule", "add", "x", "--from", "25:00", "--to", "07:00", "--entries", "tiktok"])
        #expect(badTime.status == 2, "\(badTime)")
    }

    @Test(arguments: [["status"], ["wallet", "--json"], ["block", "instagram"], ["export", "--csv"], ["profile", "list"]])
    func an_unreachable_helper_exits_3(arguments: [String]) async throws {
        let result = try await cli(arguments, socket: "/tmp/soc-nowhere/ctl.sock")
        #expect(result.status == 3, "\(result)")
    }

    @Test(arguments: [("45m", 2700), ("2h", 7200), ("1h30m", 5400), ("90s", 90), ("1h0m5s", 3605)])
    func durations_parse(text: String, seconds: Int64) async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "youtube"])
        let focus = try await server.json(["focus", text, "--entries", "youtube"])
        let start = try #require((focus["start"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        let end = try #require((focus["end"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        #expect(Int64(end.timeIntervalSince(start).rounded()) == seconds)
    }

    @Test func a_downloaded_list_is_an_entry_the_engine_blocks_and_its_host_stays_allowed() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let file = server.directory + "/doom.txt"
        try writeList(file, names: 50, prefix: "doom")
        let added = try await server.cli(["lists", "add", "file://" + file, "--name", "doom"])
        #expect(added.status == 0, "\(added)")
        #expect(await server.blocks("doom7.example.com") == false, "listed, not blocked yet")

        let blocked = try await server.cli(["block", "doom"])
        #expect(blocked.status == 0, "\(blocked)")
        #expect(await server.blocks("doom7.example.com"))
        #expect(await server.blocks("www.doom7.example.com"))

        server.time.shift(.hours(3))
        #expect(try await server.cli(["unblock", "doom"]).status == 0)
        #expect(try await server.cli(["lists", "rm", "doom"]).status == 0)
        let after = try await server.cli(["block", "doom"])
        #expect(after.status == 2, "a removed list is no longer a name: \(after)")
    }
}
}
