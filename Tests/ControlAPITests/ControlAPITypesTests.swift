import ControlAPI
import Foundation
import Testing

struct ControlAPITypesTests {
    @Test func error_body_always_carries_rule_and_opens_at() throws {
        let plain = String(decoding: ControlJSON.encode(ControlErrorEnvelope(error: ControlError(code: "x", message: "m"))), as: UTF8.self)
        #expect(plain == #"{"error":{"code":"x","message":"m","opens_at":null,"reason":null,"rule":null}}"#)
        let refusal = ControlError(code: "refused", message: "cooldown", rule: "cooldown", opensAt: Date(timeIntervalSince1970: 1_800_000_000))
        let text = String(decoding: ControlJSON.encode(ControlErrorEnvelope(error: refusal)), as: UTF8.self)
        #expect(text.contains(#""opens_at":"2027-01-15T08:00:00Z""#))
        #expect(try ControlJSON.decoder().decode(ControlErrorEnvelope.self, from: Data(text.utf8)).error == refusal)
    }

    @Test func list_info_uses_snake_case_keys_with_explicit_nulls() throws {
        let info = ListInfo(state: ListState.neverFetched, name: "a", url: "file:///a", servingCopy: false)
        let object = try #require(try JSONSerialization.jsonObject(with: ControlJSON.encode(info)) as? [String: Any])
        #expect(Set(object.keys) == [
            "state", "name", "url", "serving_copy", "entry_count", "size_bytes", "bad_line_count", "bad_lines",
            "last_success", "last_attempt", "last_changed", "next_refresh", "last_error", "last_error_code", "consecutive_failures",
            "defined_in", "held",
        ])
        #expect(object["entry_count"] is NSNull)
        #expect(object["held"] is NSNull)
    }

    @Test(arguments: [
        (#"{"url": 5}"#, "the field 'url' must be a string"),
        (#"{"name": "a"}"#, "the field 'url' is missing"),
        (#"{"url": null}"#, "the field 'url' must be a string, not null"),
        (#"{"url": "x", "name": ["a"]}"#, "the field 'name' must be a string"),
    ])
    func decoding_errors_name_the_field(body: String, message: String) {
        do {
            _ = try ControlJSON.decoder().decode(AddListRequest.self, from: Data(body.utf8))
            Issue.record("decoded \(body)")
        } catch let error as DecodingError {
            #expect(ControlJSON.describe(error) == message)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

struct DefaultLocationsTests {
    @Test(arguments: [
        (true, ["HOME": "/root"], "/run/scrolloff/control.sock", "/var/lib/scrolloff"),
        (false, ["HOME": "/home/ana", "XDG_RUNTIME_DIR": "/run/user/1000"], "/run/user/1000/scrolloff/control.sock", "/home/ana/.local/state/scrolloff"),
        (false, ["HOME": "/home/ana"], "/home/ana/.local/state/scrolloff/control.sock", "/home/ana/.local/state/scrolloff"),
        (false, ["HOME": "/home/ana", "XDG_STATE_HOME": "relative/ignored", "XDG_RUNTIME_DIR": "also-relative"], "/home/ana/.local/state/scrolloff/control.sock", "/home/ana/.local/state/scrolloff"),
        (false, ["HOME": "/home/ana", "XDG_STATE_HOME": "/data/state"], "/data/state/scrolloff/control.sock", "/data/state/scrolloff"),
    ])
    func helper_defaults_follow_spec_13(isRoot: Bool, environment: [String: String], socket: String, state: String) {
        let locations = DefaultLocations.defaults(isRoot: isRoot, environment: environment)
        #expect(locations.controlSocket == socket)
        #expect(locations.stateDirectory == state)
    }

    @Test func cli_prefers_the_environment_then_the_system_socket_then_the_users_own() {
        let user = ["HOME": "/home/ana", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(DefaultLocations.cliControlSocket(environment: user.merging(["SCROLLOFF_SOCKET": "/tmp/x.sock"]) { $1 }, isRoot: false, fileExists: { _ in true }) == "/tmp/x.sock")
        #expect(DefaultLocations.cliControlSocket(environment: user, isRoot: false, fileExists: { $0 == "/run/scrolloff/control.sock" }) == "/run/scrolloff/control.sock")
        #expect(DefaultLocations.cliControlSocket(environment: user, isRoot: false, fileExists: { _ in false }) == "/run/user/1000/scrolloff/control.sock")
        #expect(DefaultLocations.cliControlSocket(environment: user, isRoot: true, fileExists: { _ in false }) == "/run/scrolloff/control.sock")
    }
}
