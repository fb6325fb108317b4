import ControlAPI
@testable import ControlTransport
import Testing

/// The CLI's client: which exit code each failure gives, what its messages say, and the request it sends.
struct ControlClientTests {
    @Test(arguments: [
        (ControlClientError.helperUnreachable(path: "/s", reason: .socketMissing), Int32(3)),
        (.helperUnreachable(path: "/s", reason: .nobodyListening), 3),
        (.permissionDenied(path: "/s"), 3),
        (.timedOut(path: "/s", seconds: 1), 3),
        (.refused(status: 400, error: ControlError(code: "invalid_argument", message: "m")), 2),
        (.refused(status: 403, error: ControlError(code: "forbidden", message: "m")), 1),
        (.refused(status: 409, error: ControlError(code: "list_exists", message: "m")), 1),
        (.refused(status: 409, error: ControlError(code: "refused", message: "m", rule: "cooldown")), 1),
        (.refused(status: 404, error: ControlError(code: "unknown_name", message: "m")), 2),
        (.refused(status: 404, error: ControlError(code: "profile_not_found", message: "m")), 2),
        (.refused(status: 404, error: ControlError(code: "list_not_found", message: "m")), 1),
    ])
    func client_errors_map_to_the_exit_codes_of_spec_13(error: ControlClientError, code: Int32) {
        #expect(error.exitCode == code)
    }

    @Test func unreachable_and_permission_messages_say_what_to_do() {
        #expect(ControlClientError.helperUnreachable(path: "/s", reason: .socketMissing).description.contains("sudo systemctl start scrolloff-dns"))
        #expect(ControlClientError.permissionDenied(path: "/s").description.contains("usermod -aG scrolloff"))
    }

    @Test func request_carries_profile_length_and_close() throws {
        let client = ControlClient(socketPath: "/s", profile: "kids & teens")
        let bytes = try client.requestBytes(method: "POST", path: "/v1/lists", body: Array("{}".utf8), accept: ControlMediaType.ndjson)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("POST /v1/lists?profile=kids%20%26%20teens HTTP/1.1\r\n"))
        #expect(text.contains("Content-Length: 2\r\n"))
        #expect(text.contains("Accept: application/x-ndjson\r\n"))
        #expect(text.contains("Connection: close\r\n"))
        #expect(text.hasSuffix("\r\n\r\n{}"))
    }
}
