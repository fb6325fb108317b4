import Foundation
import Helper
import Sinkhole
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
        let errors = helper.log.lines.filter { $0.hasPrefix("error") || $0.hasPrefix("critical") }
        #expect(errors.isEmpty, "\(errors)")
    }
}
}

extension ControlEndToEnd {
/// The same stop with the household page and the metrics endpoint on (one HTTP
/// stack for both): on Hummingbird's `Application`, whose own service group and graceful handler stopped
/// the server a second time, the stop logged "Already closed" or a CancellationError as errors.
@Suite
struct WebShutdownTests {
    @Test func stopping_the_helper_with_the_page_and_metrics_on_logs_no_error_and_frees_both_ports() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let web = try freeLoopbackPort()
        let metrics = try freeLoopbackPort()
        let helper = try await ReloadableHelper(upstream: upstream) { configuration, _ in
            configuration.webListen = HostPort(host: "127.0.0.1", port: web)
            configuration.webListenRequired = true
            configuration.metricsListen = HostPort(host: "127.0.0.1", port: metrics)
        }
        let page = try await run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "http://127.0.0.1:\(web)/"])
        #expect(page.stdout == "200", "\(page)")
        let scrape = try await run("/usr/bin/curl", ["-s", "--max-time", "5", "http://127.0.0.1:\(metrics)/metrics"])
        #expect(scrape.stdout.contains("scrolloff_dns_queries_total"), "\(scrape)")
        await helper.stop()
        let errors = helper.log.lines.filter { $0.hasPrefix("error") || $0.hasPrefix("critical") }
        #expect(errors.isEmpty, "\(errors)")
        // Both listeners are closed: the ports can be bound again at once.
        for port in [web, metrics] {
            let refused = try await run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2", "http://127.0.0.1:\(port)/"])
            #expect(refused.stdout == "000", "port \(port) still answers")
        }
    }
}
}
