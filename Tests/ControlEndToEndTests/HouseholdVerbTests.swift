#if canImport(Glibc)
import Engine
import Glibc
#endif
import ControlAPI
import Foundation
import Helper
import ScrollOffCore
import Store
import Testing

extension ControlEndToEnd {
/// SPEC §11 through the CLI and the socket: owners grant time (`adjust`), members ask for it
/// (`ask`, `requests`), roles keep editing with owners, and `profile rm`.
@Suite
struct HouseholdVerbTests {
    /// The CLI as another user, in UTC, against `server`.
    static func cli(as uid: UInt32, _ arguments: [String], _ server: EngineServer) async throws -> ProcessResult {
        try await run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", scrolloffBinary] + arguments + ["--socket", server.socketPath],
                      environment: ["PATH": "/usr/bin:/bin", "NO_COLOR": "1", "TZ": "UTC", "HOME": "/tmp"])
    }

    /// Profile `kids` owned by uid 40001 with member uid 40002, from the configuration as a household writes it.
    static func household(_ server: EngineServer) async throws {
        try await server.engine.applyConfiguredProfiles(
            default: ProfileSettings(name: "default", timeZoneID: "UTC", preset: .strict),
            profiles: [ProfileSettings(name: "kids", clientCIDRs: ["192.0.2.0/28"], timeZoneID: "UTC", preset: .strict,
                                       ownerUIDs: [40001], memberUIDs: [40002])])
    }

    @Test func an_owner_grants_and_takes_time_and_the_ledger_keeps_the_note() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let granted = try await server.json(["adjust", "+15m", "--note", "chores done"])
        #expect(granted["balance_seconds"] as? Int == 120 + 900, "\(granted)")
        #expect(granted["seconds"] as? Int == 900)
        let taken = try await server.cli(["adjust", "-10m", "--note", "late to dinner"])
        #expect(taken.status == 0, "\(taken)")
        #expect(taken.stdout.contains("-10 min"), "\(taken.stdout)")
        #expect(try await server.json(["wallet"])["balance_seconds"] as? Int == 120 + 900 - 600)
        let csv = try await server.cli(["export", "--csv"])
        let adjustRows = csv.stdout.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("ledger,") && $0.contains(",adjust,") }
        #expect(adjustRows.map { $0.split(separator: ",").last } == ["chores done", "late to dinner"], "\(csv.stdout)")
        let events = try await server.cli(["events"])
        #expect(events.stdout.contains("root adjusted the balance by +15 min: chores done"), "\(events.stdout)")

        // Taking more than the balance, more than a day, nothing, or without a note changes nothing.
        #expect(try await server.cli(["adjust", "-1h", "--note", "too much"]).status == 2)
        #expect(try await server.cli(["adjust", "+25h", "--note", "typo"]).status == 2)
        #expect(try await server.cli(["adjust", "+15m"]).status == 2)
        #expect(try await server.cli(["adjust", "+15m", "--note", "  "]).status == 2)
        #expect(try await server.cli(["adjust", "soon", "--note", "x"]).status == 2)
        #expect(try await server.json(["wallet"])["balance_seconds"] as? Int == 420)
    }

    @Test func a_member_asks_an_owner_approves_and_the_member_sees_the_answer() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        try await Self.household(server)
        let asked = try await Self.cli(as: 40002, ["ask", "15m", "--note", "homework research", "--profile", "kids", "--json"], server)
        #expect(asked.status == 0, "\(asked)")
        let request = try JSONSerialization.jsonObject(with: Data(asked.stdout.utf8)) as? [String: Any]
        let id = try #require(request?["id"] as? Int)
        #expect(request?["status"] as? String == "pending")
        #expect(request?["created_at"] is String)

        // The owner sees it with every profile they may view…
        let listed = try await Self.cli(as: 40001, ["requests", "--all"], server)
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.stdout.contains("homework research") && listed.stdout.contains("pending"), "\(listed.stdout)")
        // …and approves it: a ledger `adjust` row with the request's note.
        let approved = try await Self.cli(as: 40001, ["requests", "approve", "\(id)", "--note", "go for it", "--profile", "kids"], server)
        #expect(approved.status == 0, "\(approved)")
        #expect(try await server.json(["wallet", "--profile", "kids"])["balance_seconds"] as? Int == 120 + 900)
        let csv = try await server.cli(["export", "--csv"])
        #expect(csv.stdout.split(whereSeparator: \.isNewline).contains { $0.hasPrefix("ledger,") && $0.contains(",adjust,900,") && $0.contains("homework research") },
                "\(csv.stdout)")

        // The member sees the answer in `status`.
        let status = try await Self.cli(as: 40002, ["status", "--profile", "kids", "--json"], server)
        let answered = try #require((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["requests"] as? [[String: Any]])
        #expect(answered.first?["status"] as? String == "approved")
        #expect(answered.first?["answered_by"] as? String == "uid 40001")
        #expect(answered.first?["answer_note"] as? String == "go for it")
        let human = try await Self.cli(as: 40002, ["status", "--profile", "kids"], server)
        #expect(human.stdout.contains("was approved by uid 40001: “go for it”"), "\(human.stdout)")

        // A request is answered once.
        let again = try await server.cli(["requests", "decline", "\(id)"])
        #expect(again.status == 2, "\(again)")
        #expect(again.stderr.contains("already approved"), "\(again.stderr)")
        #expect(try await server.json(["wallet", "--profile", "kids"])["balance_seconds"] as? Int == 1020)

        // A decline is recorded and adds nothing.
        let second = try await Self.cli(as: 40002, ["ask", "1h", "--note", "movie night", "--profile", "kids", "--json"], server)
        let secondID = try #require((try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any])?["id"] as? Int)
        #expect(try await server.cli(["requests", "decline", "\(secondID)", "--note", "school night"]).status == 0)
        #expect(try await server.json(["wallet", "--profile", "kids"])["balance_seconds"] as? Int == 1020)
        let all = try await server.json(["requests", "--profile", "kids"])
        let rows = try #require(all["requests"] as? [[String: Any]])
        #expect(rows.map { $0["status"] as? String } == ["declined", "approved"])
        let events = try await server.cli(["events", "--profile", "kids"])
        #expect(events.stdout.contains("root declined the request for 1 h: school night"), "\(events.stdout)")
    }

    @Test func a_sixth_pending_request_is_refused_while_service_goes_on() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        for n in 1...HelperEngine.pendingRequestsPerProfile {
            #expect(try await server.cli(["ask", "5m", "--note", "request \(n)"]).status == 0)
        }
        let refused = try await server.cli(["ask", "5m", "--note", "one more", "--json"])
        #expect(refused.status == 1, "\(refused)")
        let error = try decode(ControlErrorEnvelope.self, refused.stdout).error
        #expect(error.rule == "requests_pending", "\(error)")
        // Others are served meanwhile, and answering one makes room.
        #expect(try await server.cli(["status"]).status == 0)
        #expect(try await server.cli(["requests", "decline", "1"]).status == 0)
        #expect(try await server.cli(["ask", "5m", "--note", "one more"]).status == 0)
        // Notes are short: 281 characters are refused.
        #expect(try await server.cli(["requests", "decline", "2"]).status == 0)
        #expect(try await server.cli(["ask", "5m", "--note", String(repeating: "a", count: 281)]).status == 2)
        #expect(try await server.cli(["ask", "5m", "--note", String(repeating: "a", count: 280)]).status == 0)
        // Requests are for a minute up to a day.
        #expect(try await server.cli(["ask", "30s", "--note", "tiny"]).status == 2)
        #expect(try await server.cli(["ask", "25h", "--note", "huge"]).status == 2)
    }

    @Test func a_member_views_spends_and_asks_but_editing_and_granting_are_refused_with_the_rule() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        try await Self.household(server)
        #expect(try await server.cli(["block", "instagram", "--profile", "kids"]).status == 0)

        // Member 40002: view and spend…
        #expect(try await Self.cli(as: 40002, ["status", "--profile", "kids"], server).status == 0)
        #expect(try await Self.cli(as: 40002, ["wallet", "--profile", "kids"], server).status == 0)
        let used = try await Self.cli(as: 40002, ["use", "instagram", "--for", "1m", "--profile", "kids"], server)
        #expect(used.status == 0, "\(used)")
        #expect(try await Self.cli(as: 40002, ["stop", "--profile", "kids"], server).status == 0)
        // …but not edit: the refusal says the role, what it allows and who may.
        for arguments in [["unblock", "instagram"], ["block", "reddit"], ["adjust", "+15m", "--note", "me"]] {
            let refused = try await Self.cli(as: 40002, arguments + ["--profile", "kids"], server)
            #expect(refused.status == 1, "\(arguments) \(refused)")
            #expect(refused.stderr.contains("is a member of profile 'kids'") && refused.stderr.contains("uid 40001"), "\(refused.stderr)")
            let json = try await Self.cli(as: 40002, arguments + ["--profile", "kids", "--json"], server)
            let error = try decode(ControlErrorEnvelope.self, json.stdout).error
            #expect(error.code == "forbidden" && error.rule == "role", "\(error)")
        }
        let asked = try await Self.cli(as: 40002, ["ask", "15m", "--note", "please", "--profile", "kids", "--json"], server)
        let id = try #require((try JSONSerialization.jsonObject(with: Data(asked.stdout.utf8)) as? [String: Any])?["id"] as? Int)
        let selfApproved = try await Self.cli(as: 40002, ["requests", "approve", "\(id)", "--profile", "kids"], server)
        #expect(selfApproved.status == 1, "\(selfApproved)")
        #expect(selfApproved.stderr.contains("grant or take time"), "\(selfApproved.stderr)")
        // Approving through another profile's name is checked on the request's own profile.
        let sideways = try await Self.cli(as: 40002, ["requests", "approve", "\(id)"], server)
        #expect(sideways.status == 1, "\(sideways)")
        let stillPending = try await server.json(["requests", "--profile", "kids"])["requests"] as? [[String: Any]]
        #expect(stillPending?.first?["status"] as? String == "pending")

        // Owner 40001 edits and grants.
        #expect(try await Self.cli(as: 40001, ["block", "reddit", "--profile", "kids"], server).status == 0)
        #expect(try await Self.cli(as: 40001, ["adjust", "+5m", "--note", "dishes", "--profile", "kids"], server).status == 0)
        // uid 40003 is listed nowhere and in no group: refused, not by role.
        let stranger = try await curl(server.socketPath, "GET", "/v1/status?profile=kids", asUser: 40003)
        #expect(stranger.status == 403)
        #expect(try decode(ControlErrorEnvelope.self, stranger.body).error.rule == nil)
        // A member of kids is nobody on the default profile: it names no one, so only group
        // members act there, and 40002 is not in the group.
        #expect(try await curl(server.socketPath, "GET", "/v1/status", asUser: 40002).status == 403)
    }

    /// `export` spans profiles, so it keeps the rows of the profiles the caller may view: a
    /// member's export has their own profile's ledger and events, never another's (SPEC §11),
    /// in both formats; root's has everything. `profile list` too.
    @Test func a_members_export_holds_only_the_profiles_they_may_view() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        try await Self.household(server)
        #expect(try await server.cli(["adjust", "+7m", "--note", "default secret"]).status == 0)
        #expect(try await server.cli(["adjust", "+3m", "--note", "kids chores", "--profile", "kids"]).status == 0)

        let csv = try await Self.cli(as: 40002, ["export", "--csv", "--profile", "kids"], server)
        #expect(csv.status == 0, "\(csv)")
        #expect(csv.stdout.contains("kids chores") && !csv.stdout.contains("default secret"), "\(csv.stdout)")
        let json = try await Self.cli(as: 40002, ["export", "--json", "--profile", "kids"], server)
        let rows = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["rows"] as? [[String: Any]])
        #expect(!rows.isEmpty && rows.allSatisfy { $0["profile"] as? String == "kids" }, "\(json.stdout)")
        // The owner of kids likewise; root sees both profiles.
        let owner = try await Self.cli(as: 40001, ["export", "--csv", "--profile", "kids"], server)
        #expect(owner.stdout.contains("kids chores") && !owner.stdout.contains("default secret"), "\(owner.stdout)")
        let root = try await server.cli(["export", "--csv"])
        #expect(root.stdout.contains("kids chores") && root.stdout.contains("default secret"))
        // `profile list` likewise: the member sees kids and its clients, not the other profiles.
        let listed = try await Self.cli(as: 40002, ["profile", "list", "--profile", "kids", "--json"], server)
        let names = ((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["profiles"] as? [[String: Any]])?
            .compactMap { $0["name"] as? String }
        #expect(names == ["kids"], "\(listed)")
        let all = try await server.json(["profile", "list"])["profiles"] as? [[String: Any]]
        #expect(all?.count == 2, "\(String(describing: all))")
    }

    @Test func profile_rm_waits_for_locks_and_says_what_goes_with_it() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        #expect(try await server.cli(["profile", "add", "guests", "--clients", "198.51.100.0/24"]).status == 0)
        #expect(try await server.cli(["profile", "add", "kids", "--clients", "192.0.2.0/28"]).status == 0)
        #expect(try await server.cli(["block", "tiktok", "--profile", "kids"]).status == 0)

        let locked = try await server.cli(["profile", "rm", "kids", "--json"])
        #expect(locked.status == 1, "\(locked)")
        let error = try decode(ControlErrorEnvelope.self, locked.stdout).error
        #expect(error.rule == "cooldown" && error.opensAt != nil, "\(error)")
        #expect(await server.engine.profileList().map(\.name) == ["default", "guests", "kids"])

        let removed = try await server.cli(["profile", "rm", "guests"])
        #expect(removed.status == 0, "\(removed)")
        #expect(removed.stdout.contains("wallet (2 min of credit), ledger, events, plans and requests are deleted"), "\(removed.stdout)")
        #expect(await server.engine.profileList().map(\.name) == ["default", "kids"])
        #expect(try await server.cli(["status", "--profile", "guests"]).status == 2)
        #expect(try await server.cli(["profile", "rm", "default"]).status == 2)
        #expect(try await server.cli(["profile", "rm", "nosuch"]).status == 2)
        // Once the cooldown is over, kids goes too.
        server.time.shift(.hours(3))
        #expect(try await server.cli(["profile", "rm", "kids"]).status == 0)
        #expect(await server.engine.profileList().map(\.name) == ["default"])
    }

    @Test func a_client_claimed_by_two_profiles_is_refused_with_both_names() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        #expect(try await server.cli(["profile", "add", "kids", "--clients", "02:5c:00:00:77:0a,192.0.2.0/28"]).status == 0)
        for clients in ["02-5C-00-00-77-0A", "192.0.2.0/28"] {
            let refused = try await server.cli(["profile", "add", "guests", "--clients", clients])
            #expect(refused.status == 2, "\(refused)")
            #expect(refused.stderr.contains("already a client of profile kids, so profile guests cannot claim it"), "\(refused.stderr)")
        }
        #expect(await server.engine.profileList().map(\.name) == ["default", "kids"])
        #expect(try await server.cli(["profile", "add", "guests", "--clients", "02:5c:00:00:77:0b"]).status == 0)
        #expect(try await server.cli(["profile", "add", "bad", "--clients", "02:5c:00:00:77"]).status == 2)
    }

    @Test func profile_rm_is_for_root_only() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755, authorizer: EveryoneIsAMember())
        defer { Task { await server.stop() } }
        #expect(try await server.cli(["profile", "add", "guests", "--clients", "198.51.100.0/24"]).status == 0)
        let refused = try await curl(server.socketPath, "DELETE", "/v1/profiles/guests", asUser: 65534)
        #expect(refused.status == 403, "\(refused)")
        #expect(await server.engine.profileList().map(\.name) == ["default", "guests"])
    }
}
}
