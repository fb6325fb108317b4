import Foundation
import Testing

/// Every DNS transport of the real helper, run as root, as an ordinary user and under the shipped
/// unit's capability set (issue 11: DNS over TCP was reset for everyone but full root, and no
/// test saw it because every test ran as root). CI runs as root, so it runs all three.
@Suite struct TransportPrivilegeEndToEndTests {
    @Test(arguments: PrivilegeMode.allCases)
    func udp_tcp_and_truncation_to_tcp_all_answer(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"], mode: mode)
        mode.check(server.child.process.pid)
        // UDP: a forwarded name and a blocked one.
        #expect(try shortA(server.port, "host.test") == "10.0.0.7")
        #expect(try shortA(server.port, "www.blocked.test") == "0.0.0.0")
        // TCP, with two clients (dig and kdig), forwarded, cached and blocked.
        let tcp = try dig(server.port, ["+tcp", "+short", "fwd.test", "A"])
        #expect(tcp.contains("10.1.2.3"), "\(mode): \(tcp)")
        #expect(try kdig(server.port, ["+tcp", "+short", "host.test"]).contains("10.0.0.7"))
        #expect(try kdig(server.port, ["+tcp", "+short", "blocked.test"]).contains("0.0.0.0"))
        // A reply too large for UDP: truncated there, and dig's retry over TCP gets it whole.
        let retried = try dig(server.port, ["+noedns", "big.test", "TXT"])
        #expect(retried.contains("Truncated, retrying in TCP mode"), "\(mode): \(retried)")
        #expect(retried.contains("ANSWER: 1"), "\(mode): \(retried)")
        for part in Dnsmasq.bigTXT { #expect(retried.contains(part)) }
        // The control socket answers too (its file is the helper user's own).
        let status = try runWithStatus(Products.scrolloff, ["status", "--socket", server.controlSocket, "--json"])
        #expect(status.exitCode == 0, "\(mode): \(status)")
        #expect(server.child.isRunning, "\(mode): \(server.child.stderr)")
    }

    @Test(arguments: PrivilegeMode.allCases)
    func pipelined_tcp_queries_on_one_connection_are_all_answered(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"], mode: mode)
        let output = try python(server.port, Self.pipelined, scratch: scratch)
        #expect(output == """
            host.test. 0 10.0.0.7
            blocked.test. 0 0.0.0.0
            fwd.test. 0 10.1.2.3
            missing.test. 3 -
            www.blocked.test. 0 0.0.0.0

            """, "\(mode): \(output)")
    }

    /// Five queries in one segment; prints each name with its reply's rcode and address.
    static let pipelined = """
        import socket, struct, dns.message
        names = ["host.test", "blocked.test", "fwd.test", "missing.test", "www.blocked.test"]
        queries = [dns.message.make_query(n, "A") for n in names]
        t = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        t.sendall(b"".join(struct.pack(">H", len(w)) + w for w in (q.to_wire() for q in queries)))
        def read(n):
            data = b""
            while len(data) < n:
                chunk = t.recv(n - len(data))
                if not chunk: raise SystemExit("closed")
                data += chunk
            return data
        ids = {}
        for _ in queries:
            length = struct.unpack(">H", read(2))[0]
            r = dns.message.from_wire(read(length))
            ids[r.id] = r
        for q in queries:
            r = ids[q.id]
            print(q.question[0].name, r.rcode(), r.answer[0][0].address if r.answer else "-")
        """
}
