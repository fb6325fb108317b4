import Foundation
import Testing

extension ControlEndToEnd {
/// Stopping the whole helper (`HelperMain`) with the control server on Hummingbird: the socket
/// goes away and nothing is logged as an error on the way (a stop is not a failure).
@Suite
struct ControlShutdownTests {
    @Test func stopping_the_helper_after_a_cli_call_removes_the_socket_and_logs_no_error() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await ReloadableHelper(upstream: upstream)
        let socket = helper.socket
        let status = try await cli(["status"], socket: socket)
        #expect(status.status == 0, "\(status)")
        await helper.stop()
        #expect(!FileManager.default.fileExists(atPath: socket))
        let errors = helper.log.all.filter { $0.hasPrefix("error") || $0.hasPrefix("critical") }
        #expect(errors.isEmpty, "\(errors)")
    }
}
}
