import ControlAPI
import Engine
import Foundation
import Helper
import Testing

/// Every caller counts as a member of the group: the profile rules alone decide.
struct EveryoneIsAMember: ControlAuthorizer {
    func decide(_ caller: CallerIdentity, profile: String, access: ProfileAccess, action: ProfileAction) -> AuthorizationDecision { .allowed }
}

extension ControlEndToEnd {
/// SPEC §9, §11: a group member may use the profiles they are let into, but only root decides which
/// devices a profile covers; otherwise anyone could claim their own address and escape every rule.
@Suite
struct ProfileAdministrationTests {
    @Test func a_group_member_who_is_not_root_cannot_create_a_profile_or_move_clients() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755, authorizer: EveryoneIsAMember())
        defer { Task { await server.stop() } }
        // uid 65534 may use the default profile…
        #expect(try await curl(server.socketPath, "GET", "/v1/status", asUser: 65534).status == 200)

        // …but may not make a profile of their own address…
        let create = try await curl(server.socketPath, "POST", "/v1/profiles", body: #"{"name":"mine","clients":["192.0.2.7/32"]}"#, asUser: 65534)
        #expect(create.status == 403, "\(create)")
        let error = try decode(ControlErrorEnvelope.self, create.body).error
        #expect(error.code == "forbidden")
        #expect(error.message.contains("may not create profiles or change which devices a profile covers"), "\(error.message)")
        #expect(await server.engine.profileList().map(\.name) == ["default"])

        // …nor move clients of a profile root made.
        #expect(try await server.cli(["profile", "add", "kids", "--clients", "192.0.2.0/28"]).status == 0)
        let move = try await curl(server.socketPath, "POST", "/v1/profiles", body: #"{"name":"kids","clients":["198.51.100.0/24"]}"#, asUser: 65534)
        #expect(move.status == 403, "\(move)")
        #expect(await server.engine.profileList().first { $0.name == "kids" }?.clients == ["192.0.2.0/28"])
    }

    @Test func the_cli_run_by_a_group_member_shows_the_reason() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755, authorizer: EveryoneIsAMember())
        defer { Task { await server.stop() } }
        let arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", scrolloffBinary,
                         "profile", "add", "mine", "--clients", "192.0.2.7/32", "--socket", server.socketPath]
        let refused = try await run("/usr/bin/setpriv", arguments, environment: ["PATH": "/usr/bin:/bin", "NO_COLOR": "1"])
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("only root can"), "\(refused.stderr)")
        #expect(await server.engine.profileList().map(\.name) == ["default"])
    }
}
}

extension ControlEndToEnd {
@Suite
struct ProfileClientTests {
    @Test(arguments: ["+1.2.3.4", "1.2.3.04x", "+1.2.3.4/32", "10.0.0.0/+8"])
    func a_client_address_with_a_sign_or_trailing_junk_is_refused(client: String) async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let result = try await server.cli(["profile", "add", "kids", "--clients", client])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("is not an address or network") || result.stderr.contains("prefix length"), "\(result.stderr)")
        #expect(await server.engine.profileList().map(\.name) == ["default"])
    }
}
}
