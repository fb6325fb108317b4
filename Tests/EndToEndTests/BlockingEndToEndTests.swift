import Foundation
import Testing

/// Blocking answers, modes and canaries through the real binary and real clients (SPEC §9).
@Suite struct BlockingEndToEndTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var type: String
        /// `dig +short` output for A/AAAA; empty for types answered with an SOA only.
        var short: String
        var testDescription: String { "\(name) \(type)" }
    }

    static let cases: [Case] = [
        Case(name: "blocked.test", type: "A", short: "0.0.0.0"),
        Case(name: "www.blocked.test", type: "A", short: "0.0.0.0"),
        Case(name: "deep.cdn.Blocked.Test", type: "AAAA", short: "::"),
        Case(name: "blocked.test", type: "HTTPS", short: ""),
        Case(name: "m.blocked.test", type: "MX", short: ""),
    ]

    @Test func the_shipped_doh_endpoint_list_blocks_its_hosts_and_their_subdomains_and_nothing_else() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let list = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("blocklists/doh/encrypted-dns.list").path
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--doh-endpoints", list])
        #expect(try shortA(server.port, "1dot1dot1dot1.cloudflare-dns.com") == "0.0.0.0")
        #expect(try shortA(server.port, "x.1dot1dot1dot1.cloudflare-dns.com") == "0.0.0.0")
        #expect(try shortA(server.port, "host.test") == "10.0.0.7")
        #expect(upstream.queries(for: "1dot1dot1dot1.cloudflare-dns.com") == 0, "a DoH host never reaches the upstream")
    }

    @Test func blocked_names_and_subdomains_over_udp_and_tcp_with_dig_and_kdig() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"])
        for c in Self.cases {
            for transport in ["+notcp", "+tcp"] {
                let full = try dig(server.port, [transport, c.name, c.type])
                #expect(full.contains("status: NOERROR"), "\(c) \(transport): \(full)")
                #expect(full.contains("EDE: 15 (Blocked)"), "\(c) \(transport)")
                let short = try dig(server.port, [transport, "+short", c.name, c.type])
                #expect(short.trimmingCharacters(in: .whitespacesAndNewlines) == c.short, "\(c) \(transport)")
                if c.short.isEmpty {
                    #expect(full.contains("IN\tSOA"), "\(c) \(transport): \(full)")
                }
                let k = try kdig(server.port, [transport, "+edns", c.name, c.type])
                #expect(k.contains("status: NOERROR"), "\(c) kdig \(transport): \(k)")
                #expect(k.contains("EDE: 15 (Blocked)"), "\(c) kdig \(transport): \(k)")
            }
        }
        // Blocked names never reach the upstream.
        #expect(upstream.queries(for: "blocked.test") == 0)
        #expect(upstream.queries(for: "www.blocked.test") == 0)
    }

    @Test func blocked_answer_ttl_is_at_most_10_seconds_and_has_no_ede_without_edns() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"])
        let output = try python(server.port, """
            import dns.message, dns.query, dns.rdatatype
            for edns in (-1, 0):
                for t in ("A", "AAAA", "MX"):
                    q = dns.message.make_query("blocked.test", t, use_edns=edns)
                    r = dns.query.udp(q, "127.0.0.1", port=PORT, timeout=3)
                    ttls = [rr.ttl for rr in r.answer + r.authority]
                    print(edns, t, max(ttls), r.edns, [int(o.code) for o in r.options])
            """, scratch: scratch)
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(output)")
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count >= 4, let ttl = Int(fields[2]) else {
                Issue.record("unexpected: \(line)")
                continue
            }
            #expect(ttl <= 10 && ttl >= 1, "\(line)")
            if fields[0] == "-1" {
                #expect(fields[3] == "-1" && line.hasSuffix("[]"), "no OPT, no EDE: \(line)")
            } else {
                #expect(line.hasSuffix("[15]"), "EDE 15: \(line)")
            }
        }
    }

    @Test(arguments: [("nxdomain", "NXDOMAIN"), ("refused", "REFUSED")])
    func blocking_mode(mode: String, status: String) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"], extra: ["--blocking-mode", mode])
        for type in ["A", "AAAA", "HTTPS"] {
            let output = try dig(server.port, ["www.blocked.test", type])
            #expect(output.contains("status: \(status)"), "\(type): \(output)")
            #expect(output.contains("EDE: 15 (Blocked)"), "\(type): \(output)")
        }
        // Names not on the list are still forwarded.
        #expect(try dig(server.port, ["+short", "host.test"]).contains("10.0.0.7"))
    }

    @Test func canaries_answer_without_asking_upstream() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        for name in ["use-application-dns.net", "mask.icloud.com", "mask-h2.icloud.com"] {
            #expect(try dig(server.port, [name, "A"]).contains("status: NXDOMAIN"), "\(name)")
        }
        for name in ["resolver.arpa", "_dns.resolver.arpa"] {
            let arpa = try dig(server.port, [name, "SVCB"])
            #expect(arpa.contains("status: NOERROR") && arpa.contains("ANSWER: 0"), "\(name): \(arpa)")
        }
        #expect(upstream.queries(for: "_dns.resolver.arpa") == 0, "a DDR question is never forwarded (RFC 9462)")
        #expect(upstream.queries(for: "use-application-dns.net") == 0)
        #expect(upstream.queries(for: "resolver.arpa") == 0)
    }

    @Test func cname_chain_through_a_blocked_name_is_blocked() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["tracker.test"])
        let output = try dig(server.port, ["innocent.test", "A"])
        #expect(output.contains("EDE: 15 (Blocked)"), "\(output)")
        #expect(try dig(server.port, ["+short", "innocent.test", "A"]).trimmingCharacters(in: .whitespacesAndNewlines) == "0.0.0.0")
    }

    /// A list file edited by hand reaches DNS at `lists update`: added names block at once, and
    /// names it drops stay blocked while the block's cooldown holds the list (SPEC §3).
    @Test func an_edited_list_blocks_added_names_at_once_and_keeps_dropped_ones_under_the_cooldown() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let list = try scratch.file("kids.txt", "blocked.test\n")
        #expect(try server.cli(["lists", "add", "file://" + list, "--name", "kids"]).exitCode == 0)
        #expect(try server.cli(["block", "kids"]).exitCode == 0)
        #expect(try dig(server.port, ["+short", "host.test"]).contains("10.0.0.7"))
        try "host.test\n".write(toFile: list, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: list)
        let update = try server.cli(["lists", "update", "kids"])
        #expect(update.exitCode == 0, "\(update)")
        #expect(try dig(server.port, ["+short", "host.test"]).contains("0.0.0.0"))
        #expect(try dig(server.port, ["+short", "blocked.test"]).contains("0.0.0.0"), "held by the block's cooldown")
    }
}
