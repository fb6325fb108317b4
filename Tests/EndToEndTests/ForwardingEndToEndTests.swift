import Foundation
import Testing

/// Forwarding, caching, truncation and upstream trouble (SPEC §9 "Forwarding", RFC 7766, RFC 5452).
@Suite struct ForwardingEndToEndTests {
    @Test func forwarded_answers_are_cached_and_their_ttl_counts_down() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let first = try dig(server.port, ["+noall", "+answer", "host.test", "A"])
        #expect(first.contains("10.0.0.7"), "\(first)")
        Thread.sleep(forTimeInterval: 1.2)
        let second = try dig(server.port, ["+noall", "+answer", "HOST.test", "A"])
        #expect(second.contains("10.0.0.7"))
        #expect(try kdig(server.port, ["+tcp", "+short", "host.test", "A"]).contains("10.0.0.7"))
        #expect(upstream.queries(for: "host.test", type: "A") == 1)
        let ttl = { (text: String) in text.split(whereSeparator: { $0 == "\t" || $0 == " " }).compactMap { Int($0) }.first ?? -1 }
        #expect(ttl(first) == 300)
        #expect(ttl(second) < 300 && ttl(second) >= 290, "\(second)")
        // The client's spelling is echoed.
        #expect(second.contains("HOST.test."))
    }

    @Test func negative_answers_are_cached_too() throws {
        let scratch = try Scratch()
        let upstream = try ScriptedUpstream(.plain, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        for _ in 0..<3 {
            let answer = try dig(server.port, ["missing.test", "A"])
            #expect(answer.contains("status: NXDOMAIN"), "\(answer)")
            #expect(answer.contains("IN\tSOA"), "\(answer)")
        }
        #expect(upstream.queries.count == 1, "\(upstream.queries)")
    }

    /// A managed name opened by a grant is answered with its TTL capped at the seconds left of
    /// the grant (SPEC §9), and blocked again when the grant ends: blocked and spent through the
    /// CLI, as a person does.
    @Test func managed_names_get_their_ttl_capped_and_are_blocked_when_the_grant_ends() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["host.test"])
        let use = try server.cli(["use", "host.test", "--for", "3s"])
        #expect(use.exitCode == 0, "\(use)")
        let answer = try dig(server.port, ["+noall", "+answer", "host.test", "A"])
        let fields = answer.split(whereSeparator: { $0 == "\t" || $0 == " " || $0 == "\n" })
        let ttl = try #require(fields.dropFirst().first.flatMap { Int($0) }, "\(answer)")
        #expect((1...3).contains(ttl), "\(answer)")
        #expect(answer.contains("10.0.0.7"))
        let other = try dig(server.port, ["+noall", "+answer", "fwd.test", "A"])
        #expect(other.contains("\t300\tIN\tA"), "\(other)")
        // The spend ends 3 s after it opened; the engine applies the grant's end on time.
        Thread.sleep(forTimeInterval: 3.5)
        let blocked = try dig(server.port, ["host.test", "A"])
        #expect(blocked.contains("0.0.0.0") && blocked.contains("EDE: 15 (Blocked)"), "\(blocked)")
    }

    @Test func a_large_answer_is_truncated_over_udp_and_whole_over_tcp() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let udpOnly = try dig(server.port, ["+noedns", "+ignore", "big.test", "TXT"])
        #expect(udpOnly.contains(" tc "), "\(udpOnly)")
        #expect(udpOnly.contains("ANSWER: 0"))
        let retried = try dig(server.port, ["+noedns", "big.test", "TXT"])
        #expect(retried.contains("Truncated, retrying in TCP mode"), "\(retried)")
        #expect(retried.contains("ANSWER: 1"))
        for part in Dnsmasq.bigTXT { #expect(retried.contains(part)) }
        let k = try kdig(server.port, ["+tcp", "big.test", "TXT"])
        #expect(k.contains("ANSWER: 1"), "\(k)")
    }

    @Test func spoofed_replies_are_ignored() throws {
        let scratch = try Scratch()
        let upstream = try ScriptedUpstream(.spoof, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let answer = try dig(server.port, ["+short", "victim.test", "A"])
        #expect(answer.trimmingCharacters(in: .whitespacesAndNewlines) == "192.0.2.1", "\(answer)")
    }

    @Test func a_silent_upstream_gives_servfail_and_a_second_upstream_takes_over() throws {
        let scratch = try Scratch()
        let silent = try ScriptedUpstream(.silent, scratch: scratch)
        let alone = try Sinkhole(scratch: scratch, upstreams: [silent.port], extra: ["--upstream-timeout-ms", "500"])
        let failed = try dig(alone.port, ["nobody.test", "A"])
        #expect(failed.contains("status: SERVFAIL"), "\(failed)")
        #expect(!silent.queries.isEmpty)

        let good = try Dnsmasq(scratch: scratch)
        let pair = try Sinkhole(scratch: scratch, upstreams: [silent.port, good.port], extra: ["--upstream-timeout-ms", "500"])
        #expect(try dig(pair.port, ["+short", "host.test", "A"]).contains("10.0.0.7"))
        #expect(try dig(pair.port, ["+short", "fwd.test", "A"]).contains("10.1.2.3"))
    }

    @Test func formerr_to_edns_is_retried_without_edns() throws {
        let scratch = try Scratch()
        let upstream = try ScriptedUpstream(.formerrOnEDNS, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        #expect(try dig(server.port, ["+short", "old.test", "A"]).contains("192.0.2.1"))
        let queries = upstream.queries
        #expect(queries.count == 2, "\(queries)")
        let ednsVersions = queries.map { $0.split(separator: " ")[3] }
        #expect(ednsVersions == ["0", "-1"], "\(queries)")
    }

    /// RFC 6891 §7 over the TCP fallback: an old server truncates every UDP answer and, over TCP,
    /// answers FORMERR to a query with OPT. Before, that FORMERR reached the client as the answer;
    /// now the question is asked once more without EDNS (UDP, TC again, then TCP without OPT).
    @Test func formerr_to_edns_over_the_tcp_fallback_is_retried_without_edns() throws {
        let scratch = try Scratch()
        let script = try scratch.file("old-server.py", """
            import socket, threading, dns.message, dns.rcode, dns.rrset, dns.flags
            \(PythonUpstreamPrelude.bindUDPAndTCP)
            \(PythonDNSTCP.functions)
            t.listen(8)
            print(port, flush=True)
            def serve_tcp(conn):
                with conn:
                    while True:
                        data = dns_tcp_read_frame(conn)
                        if data is None: return
                        q = dns.message.from_wire(data)
                        print("QUERY tcp", q.edns, flush=True)
                        r = dns.message.make_response(q)
                        if q.edns >= 0:
                            r.use_edns(False)
                            r.set_rcode(dns.rcode.FORMERR)
                        else:
                            r.answer.append(dns.rrset.from_text(q.question[0].name, 60, "IN", "A", "192.0.2.1"))
                        conn.sendall(dns_tcp_frame(r.to_wire()))
            def accept():
                while True:
                    conn, _ = t.accept()
                    threading.Thread(target=serve_tcp, args=(conn,), daemon=True).start()
            threading.Thread(target=accept, daemon=True).start()
            while True:
                data, addr = u.recvfrom(4096)
                q = dns.message.from_wire(data)
                print("QUERY udp", q.edns, flush=True)
                r = dns.message.make_response(q)
                r.flags |= dns.flags.TC
                u.sendto(r.to_wire(), addr)
            """)
        let upstream = try Child("/usr/bin/python3", ["-u", script], scratch: scratch, label: "old-server")
        let port = try upstream.waitForLine { Int($0) != nil }
        let server = try Sinkhole(scratch: scratch, upstreams: [Int(port) ?? 0])
        let answer = try dig(server.port, ["old.test", "A"])
        #expect(answer.contains("status: NOERROR") && answer.contains("192.0.2.1"), "\(answer)")
        let queries = upstream.stdout.split(separator: "\n").filter { $0.hasPrefix("QUERY") }
        #expect(queries == ["QUERY udp 0", "QUERY tcp 0", "QUERY udp -1", "QUERY tcp -1"], "\(queries)")
    }

    @Test func the_dnssec_ok_bit_is_passed_upstream_and_cached_apart() throws {
        let scratch = try Scratch()
        let upstream = try ScriptedUpstream(.plain, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        #expect(try dig(server.port, ["+short", "+dnssec", "signed.test", "A"]).contains("192.0.2.1"))
        #expect(try dig(server.port, ["+short", "signed.test", "A"]).contains("192.0.2.1"))
        #expect(try dig(server.port, ["+short", "+dnssec", "signed.test", "A"]).contains("192.0.2.1"))
        let doBits = upstream.queries.map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(doBits == ["1", "0"], "\(upstream.queries)")
    }

    @Test func identical_concurrent_questions_share_one_upstream_query() throws {
        let scratch = try Scratch()
        let upstream = try ScriptedUpstream(.slow, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let output = try python(server.port, """
            import socket, dns.message, time
            socks = []
            for i in range(8):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.settimeout(3)
                s.sendto(dns.message.make_query("shared.test", "A").to_wire(), ("127.0.0.1", PORT))
                socks.append(s)
            for s in socks:
                r = dns.message.from_wire(s.recv(4096))
                print(r.answer[0][0].address)
            """, scratch: scratch)
        #expect(output.split(separator: "\n").filter { $0 == "192.0.2.1" }.count == 8, "\(output)")
        #expect(upstream.queries.count == 1, "\(upstream.queries)")
    }

    @Test func malformed_packets_leave_the_server_answering() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"])
        let output = try python(server.port, """
            import os, socket, random, struct, dns.message
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(0.2)
            packets = [b"", b"\\x00", os.urandom(11)]
            packets += [os.urandom(random.randint(12, 600)) for _ in range(500)]
            # A self-pointing question name, a forward pointer, a 127-hop chain, RDLENGTH past the end.
            packets.append(bytes.fromhex("abcd01000001000000000000c00c00010001"))
            packets.append(bytes.fromhex("abcd01000001000000000000c01200010001016100"))
            chain = b"".join(struct.pack(">H", 0xC000 | (12 + 2 * (i + 1))) for i in range(127)) + b"\\x00"
            packets.append(bytes.fromhex("abcd01000001000000000000") + chain + b"\\x00\\x01\\x00\\x01")
            packets.append(bytes.fromhex("abcd010000010000000000010161000001000100002904d000000000ffff"))
            packets.append(bytes.fromhex("abcd0100ffffffffffffffff"))
            for p in packets:
                s.sendto(p, ("127.0.0.1", PORT))
            # TCP garbage too: a frame that lies about its length, then a close.
            t = socket.create_connection(("127.0.0.1", PORT), timeout=2)
            t.sendall(b"\\xff\\xff" + os.urandom(100))
            t.close()
            t = socket.create_connection(("127.0.0.1", PORT), timeout=2)
            t.sendall(b"\\x00\\x05abcde")
            t.close()
            # The question after the garbage, from a socket of its own: the garbage's ~250 replies
            # fill the first socket's receive buffer (208 KiB by default), and past 256 of them
            # the kernel dropped the answer this test waits for (seen on 2026-11-25, with the old
            # and the new UDP listener alike). Up to three tries, as a stub makes: with Linux's
            # default rmem_max the garbage alone (~750 KB of buffer charge) overfills the
            # server's receive buffer, so the kernel may drop the first try before the server
            # has read its way through; what is tested is that the server answers after it all.
            q = dns.message.make_query("blocked.test", "A")
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(2)
            for attempt in range(3):
                u.sendto(q.to_wire(), ("127.0.0.1", PORT))
                try:
                    r = dns.message.from_wire(u.recv(4096))
                except socket.timeout:
                    continue
                if r.id == q.id:
                    print(r.answer[0][0].address)
                    break
            """, scratch: scratch)
        #expect(output.hasSuffix("0.0.0.0\n"), "\(output)")
        #expect(server.child.isRunning)
        #expect(try kdig(server.port, ["+tcp", "+short", "host.test"]).contains("10.0.0.7"))
    }

    @Test func tcp_pipelined_queries_are_all_answered_on_one_connection() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"])
        let output = try python(
            server.port, PythonDNSTCP.pipelined(["host.test", "blocked.test", "fwd.test", "missing.test", "www.blocked.test"]),
            scratch: scratch)
        #expect(output == """
            host.test. 0 10.0.0.7
            blocked.test. 0 0.0.0.0
            fwd.test. 0 10.1.2.3
            missing.test. 3 -
            www.blocked.test. 0 0.0.0.0

            """, "\(output)")
    }
}
