import Foundation
import Testing

/// Floods that used to take every descriptor of the helper (issue 11), and what must keep working.
@Suite struct DescriptorLimitEndToEndTests {
    /// Each forwarded question used to open a socket of its own, so once a flood of connections
    /// had taken every descriptor, forwarding failed (the debug build even crashed on the leaked
    /// promise). The upstream sockets are now a pool opened at start.
    @Test(arguments: [PrivilegeMode.root, .ordinaryUser])
    func forwarded_queries_are_answered_while_a_connection_flood_holds_every_descriptor(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        // Connection limits far above what 200 descriptors allow, so the flood reaches the limit.
        let config = try scratch.file("limits.toml", "[dns]\ntcp_connections = 4096\ntcp_connections_per_client = 4096\n")
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], extra: ["--config", config], mode: mode,
            wrapper: ["/usr/bin/prlimit", "--nofile=200:200", "--"])
        mode.check(server.child.process.pid)
        let output = try python(server.port, """
            import socket, time, dns.message, dns.rcode
            socks, deadline = [], time.time() + 4
            while len(socks) < 400 and time.time() < deadline:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.settimeout(0.3)
                try:
                    s.connect(("127.0.0.1", PORT))
                    socks.append(s)
                except OSError:
                    s.close()
            time.sleep(0.5)
            used = len(__import__("os").listdir("/proc/%d/fd" % HELPER))
            print("AT LIMIT", used >= 195)
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
        #expect(output.hasPrefix("AT LIMIT True\nFORWARDED 60 OF 60 "), "\(output)\n\(server.child.stderr)")
        #expect(server.child.isRunning, "\(server.child.stderr)")
    }

    /// The metrics endpoint accepted without bound and kept an idle connection for 30 s: 400 idle
    /// connections from 8 addresses took all 300 descriptors, and scrapes and DNS over TCP failed.
    @Test(arguments: [PrivilegeMode.root, .ordinaryUser])
    func a_flood_of_metrics_connections_leaves_scrapes_and_dns_answering(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], extra: ["--metrics", "127.0.0.1:0"], mode: mode,
            wrapper: ["/usr/bin/prlimit", "--nofile=300:300", "--"])
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
