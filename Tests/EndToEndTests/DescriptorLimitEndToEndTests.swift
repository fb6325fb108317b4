import Foundation
import TestSupport
import Testing

/// Floods that used to take every descriptor of the helper (SPEC §9), and what must keep working.
@Suite struct DescriptorLimitEndToEndTests {
    /// The number a start line says a limit was lowered to (`DescriptorBudget.apply`), e.g.
    /// `dns.tcp_connections="4096 -> 40"`.
    static func lowered(_ key: String, in log: String) -> Int? {
        guard let range = log.range(of: "\(key)=\"") else { return nil }
        let value = log[range.upperBound...].prefix { $0 != "\"" }
        return value.components(separatedBy: "-> ").last.flatMap { Int($0) }
    }

    /// Each forwarded question used to open a socket of its own, so once a flood of connections
    /// had taken every descriptor, forwarding failed (the debug build even crashed on the leaked
    /// promise). The upstream sockets are now a pool opened at start. And a flood must never take
    /// the last descriptor: libdispatch aborts the process when it cannot open `/proc/<tid>/stat`
    /// (seen as SIGILL in CI), so connection limits beyond what 200 descriptors hold are lowered to
    /// fit, and the flood meets that cap with descriptors to spare.
    @Test(arguments: [PrivilegeMode.root, .ordinaryUser])
    func forwarded_queries_are_answered_while_a_connection_flood_is_held_at_the_lowered_cap(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        // Connection limits far above what 200 descriptors allow.
        let config = try scratch.file("limits.toml", "[dns]\ntcp_connections = 4096\ntcp_connections_per_client = 4096\n")
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], extra: ["--config", config], mode: mode,
            wrapper: [.command(["/usr/bin/prlimit", "--nofile=200:200", "--"])])
        mode.check(server.child.process.pid)
        let log = server.child.stderr
        #expect(log.contains("they are lowered to fit"), "\(log)")
        let cap = try #require(Self.lowered("dns.tcp_connections", in: log), "\(log)")
        #expect((4...200).contains(cap), "\(log)")
        let output = try python(server.port, """
            import os, socket, time, dns.message, dns.rcode
            def used():
                return len(os.listdir("/proc/%d/fd" % HELPER))
            socks, peak, deadline = [], used(), time.time() + 4
            while len(socks) < 400 and time.time() < deadline:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.settimeout(0.3)
                try:
                    s.connect(("127.0.0.1", PORT))
                    socks.append(s)
                except OSError:
                    s.close()
                if len(socks) % 10 == 0:
                    peak = max(peak, used())
            time.sleep(0.5)
            peak = max(peak, used())
            # The helper closed every connection past its cap; the first CAP stay open.
            kept = 0
            for s in socks:
                try:
                    kept += s.recv(1, socket.MSG_DONTWAIT) != b""
                except BlockingIOError:
                    kept += 1
                except OSError:
                    pass
            print("HELD", len(socks), "KEPT", kept, "PEAK", peak)
            # 60 names never asked before, all at once: each needs an upstream exchange.
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(5)
            for i in range(60):
                u.sendto(dns.message.make_query("n%d.fwd.test" % i, "A", id=i).to_wire(), ("127.0.0.1", PORT))
            results = {}
            try:
                while len(results) < 60:
                    r = dns.message.from_wire(u.recv(512))
                    results[r.id] = dns.rcode.to_text(r.rcode()) + ("/" + r.answer[0][0].address if r.answer else "")
            except socket.timeout:
                pass
            answered = sum(v == "NOERROR/10.1.2.3" for v in results.values())
            print("FORWARDED", answered, "OF 60", sorted(set(results.values())))
            """.replacingOccurrences(of: "HELPER", with: "\(server.child.process.pid)"), scratch: scratch)
        let held = output.split(separator: "\n").first.map { $0.split(separator: " ").compactMap { Int($0) } } ?? []
        #expect(held.count == 3, "\(output)")
        if held.count == 3 {
            // The flood got more connections through the kernel than the cap, and the helper kept
            // the cap's worth, never coming near its last descriptor.
            #expect(held[0] > cap && held[1] <= cap, "\(output)")
            #expect(held[2] <= 200 - 32, "\(output)")
        }
        #expect(output.contains("FORWARDED 60 OF 60 "), "\(output)\n\(server.child.stderr)")
        #expect(server.child.isRunning, "\(server.child.stderr)")
        #expect(!server.child.stderr.contains("file descriptor limit is reached"), "\(server.child.stderr)")
    }

    /// The metrics endpoint accepted without bound and kept an idle connection for 30 s: 400 idle
    /// connections from 8 addresses took all 300 descriptors, and scrapes and DNS over TCP failed.
    @Test(arguments: [PrivilegeMode.root, .ordinaryUser])
    func a_flood_of_metrics_connections_leaves_scrapes_and_dns_answering(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], extra: ["--metrics", "127.0.0.1:0"], mode: mode,
            wrapper: [.command(["/usr/bin/prlimit", "--nofile=300:300", "--"])])
        mode.check(server.child.process.pid)
        let metrics = try MetricsEndToEndTests.metricsPort(server)
        let flood = try scratch.file("flood.py", """
            import socket, time
            socks, deadline = [], time.time() + 3
            while len(socks) < 400 and time.time() < deadline:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.bind(("127.0.0.%d" % (2 + len(socks) % 8), 0))
                s.settimeout(0.3)
                try:
                    s.connect(("127.0.0.1", \(metrics)))
                    socks.append(s)
                except OSError:
                    s.close()
            print("HOLDING", len(socks), flush=True)
            time.sleep(4)
            """)
        let flooder = try Child("/usr/bin/python3", [flood], scratch: scratch, label: "metrics-flood")
        _ = try flooder.waitForLine(seconds: 20) { $0.hasPrefix("HOLDING") }
        // While the flood holds what it got: a scrape, a forwarded name over TCP and over UDP.
        let scrape = try MetricsEndToEndTests.Scrape(port: metrics)
        #expect(scrape.text.contains("# TYPE scrolloff_dns_queries_total counter"), "\(scrape.text)")
        #expect(try kdig(server.port, ["+tcp", "+short", "+time=3", "fwd.test"]).contains("10.1.2.3"))
        #expect(try shortA(server.port, "host.test") == "10.0.0.7")
        #expect(server.child.isRunning)
        #expect(server.child.stderr.contains("refusing metrics connections: 32 are open"), "\(server.child.stderr)")
    }
}
