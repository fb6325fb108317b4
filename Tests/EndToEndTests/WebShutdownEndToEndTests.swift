import Foundation
import Testing

/// Stopping the real helper with the household page and the metrics endpoint on (SPEC §9a "one
/// HTTP stack"): both ran on Hummingbird's `Application`, whose own graceful handler shut the
/// server down a second time when the helper stopped and logged "Already closed" (or a
/// CancellationError) as errors. A stop is not a failure: it must log none, even with
/// connections open on both.
@Suite struct WebShutdownEndToEndTests {
    @Test func sigterm_with_open_page_and_metrics_connections_exits_cleanly_and_logs_no_error() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch, extra: ["--metrics", "127.0.0.1:0"])
        let line = try helper.child.waitForLine { $0.hasPrefix("listening metrics 127.0.0.1:") }
        let metrics = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        #expect(try helper.device("127.0.0.2").get("/").status == 200)
        #expect(try MetricsEndToEndTests.Scrape(port: metrics).text.contains("scrolloff_dns_queries_total"))
        // A browser keeps its connection open after a page (keep-alive); a scraper may hold one
        // half-sent. Both are open when the stop comes.
        let holder = try scratch.file("hold.py", """
            import socket, sys, time
            page = socket.create_connection(("127.0.0.1", \(helper.webPort)))
            page.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
            page.settimeout(5)
            print("PAGE", page.recv(15).decode(), flush=True)
            scrape = socket.create_connection(("127.0.0.1", \(metrics)))
            scrape.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n")
            print("HOLDING", flush=True)
            time.sleep(10)
            """)
        let client = try Child("/usr/bin/python3", [holder], scratch: scratch, label: "hold-\(UUID().uuidString)")
        _ = try client.waitForLine { $0.hasPrefix("HOLDING") }
        #expect(client.stdout.contains("PAGE HTTP/1.1 200"), "\(client.stdout)")
        let started = Date()
        helper.child.signal(SIGTERM)
        let status = helper.child.process.wait()
        #expect(status == 0, "\(helper.child.stderr)")
        // At once: neither server waits for its open connections to end by themselves.
        #expect(Date().timeIntervalSince(started) < 5)
        let errors = helper.child.stderr.split(separator: "\n").filter { $0.contains(" error ") || $0.contains(" critical ") }
        #expect(errors.isEmpty, "\(helper.child.stderr)")
        #expect(helper.child.stderr.contains("scrolloff-dns stopped"), "\(helper.child.stderr)")
    }
}
