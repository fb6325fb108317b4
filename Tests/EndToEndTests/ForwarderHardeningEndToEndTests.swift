import Foundation
import Testing

/// A resolver that runs unattended for a year (SPEC §9): no memory growth per forwarded query,
/// serve-stale when the upstreams die (RFC 8767), and a spoofing margin beyond the ID and port
/// (0x20 and unwanted replies, as unbound has).
@Suite struct ForwarderHardeningEndToEndTests {
    /// Sends every query of `names` once, 200 in flight at a time, with dnsperf; returns its report.
    static func dnsperf(port: Int, names: Range<Int>, prefix: String, scratch: Scratch) throws -> String {
        let file = "\(scratch.path)/queries-\(prefix)-\(names.lowerBound).txt"
        var text = ""
        text.reserveCapacity(names.count * 24)
        for index in names { text += "\(prefix)\(index).fwd.test A\n" }
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return try run("/usr/bin/dnsperf", ["-s", "127.0.0.1", "-p", "\(port)", "-d", file, "-n", "1", "-c", "1", "-q", "200", "-t", "5"])
    }

    static func completed(_ report: String) -> Int {
        report.split(separator: "\n").first { $0.contains("Queries completed:") }
            .flatMap { $0.split(separator: " ").compactMap { Int($0) }.first } ?? -1
    }

    /// Memory per forwarded query (SPEC §9): ~540 bytes per forwarded query were never freed (1.13 M queries: 666 MB).
    /// Every answer has TTL 0, so nothing is cached and each query is a new upstream exchange:
    /// any per-forward leak shows as growth between 20 k (allocator and pools warm) and 220 k.
    /// With the leak (the cache's eviction list bounded by capacity, not by live entries), 200 k
    /// forwards grew this debug build by 228 MB. The bound is 16 MB: what is left is glibc keeping
    /// freed memory (its own "in use" count stays flat, docs/benchmarks.md "Soak"). It measured 3–12 MB here
    /// before the fixed mmap threshold (AllocatorTuning), +3.5 and +3.7 MB after it at load 8–11.
    @Test func rss_stays_flat_over_200k_forwarded_queries() throws {
        let scratch = try Scratch()
        let upstream = try QuietDnsmasq(scratch: scratch, ttl: 0)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--log-level", "warning"])
        let warm = try Self.dnsperf(port: server.port, names: 0..<20_000, prefix: "w", scratch: scratch)
        #expect(Self.completed(warm) > 19_000, "\(warm)")
        let before = residentKiB(server.child.process.pid).now
        try #require(before > 0, "no VmRSS for the helper")
        let load = try Self.dnsperf(port: server.port, names: 0..<200_000, prefix: "n", scratch: scratch)
        #expect(Self.completed(load) > 190_000, "\(load)")
        // The last replies are sent; give the loops a moment to close the last exchanges.
        Thread.sleep(forTimeInterval: 0.5)
        let after = residentKiB(server.child.process.pid).now
        print("forwarded-query RSS: \(before) KiB after 20k, \(after) KiB after 200k more")
        #expect(after - before < 16 * 1024, "RSS \(before) KiB after 20k forwards, \(after) KiB after 200k more")
        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7"))
    }

    /// glibc's bytes in use in the helper, in KiB, from the `malloc_info(3)` report its SIGUSR2
    /// writes to standard error: what the arenas took from the kernel, less their free chunks, plus
    /// mmap'd blocks (the same figure as bench/soak.sh). Unlike RSS it does not move with freed
    /// memory glibc keeps, so a small bound can tell a leak from the allocator's working set.
    static func allocatorInUseKiB(_ server: Sinkhole) throws -> Int {
        let reports = server.child.stderr.components(separatedBy: "</malloc>").count - 1
        server.child.signal(SIGUSR2)
        let deadline = Date().addingTimeInterval(10)
        var text = server.child.stderr
        while text.components(separatedBy: "</malloc>").count - 1 <= reports, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            text = server.child.stderr
        }
        guard let report = text.components(separatedBy: "<malloc ").last, let totals = report.components(separatedBy: "</heap>").last
        else { throw CocoaError(.fileReadCorruptFile) }
        func size(_ marker: String) -> Int {
            guard let line = totals.split(separator: "\n").first(where: { $0.contains(marker) }),
                  let range = line.range(of: "size=\"") else { return 0 }
            return Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        let used = size("<system type=\"current\"") - size("<total type=\"fast\"") - size("<total type=\"rest\"")
            + size("<total type=\"mmap\"")
        return used / 1024
    }

    /// The soak (bench/soak.sh) with the cache full (TTL 3600): each stored cache key shared the name buffer
    /// of the loop's reusable query parser, so every answer stored cost a new full-capacity buffer
    /// that was kept (the soak: 333 MiB -> 1.34 GiB over 1 M names with the cache at its 100,000).
    /// Here the cache holds 2,000 answers and is full after the warm-up; 60,000 more names evict
    /// 58,000 answers. With the shared buffers glibc's in-use grew by 5.6 MiB over them in this
    /// debug build (13.7 -> 19.3 MiB; 5.1 -> 5.7 MiB without); the bound is 3 MiB.
    @Test func allocator_in_use_stays_flat_while_a_full_cache_evicts_60k_answers() throws {
        let scratch = try Scratch()
        let upstream = try QuietDnsmasq(scratch: scratch, ttl: 3600)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], extra: ["--log-level", "warning", "--cache-size", "2000"])
        let warm = try Self.dnsperf(port: server.port, names: 0..<10_000, prefix: "w", scratch: scratch)
        #expect(Self.completed(warm) > 9_500, "\(warm)")
        let before = try Self.allocatorInUseKiB(server)
        let load = try Self.dnsperf(port: server.port, names: 0..<60_000, prefix: "n", scratch: scratch)
        #expect(Self.completed(load) > 57_000, "\(load)")
        Thread.sleep(forTimeInterval: 0.5)
        let after = try Self.allocatorInUseKiB(server)
        print("full-cache allocator in use: \(before) KiB after 10k names, \(after) KiB after 60k more")
        #expect(after - before < 3 * 1024, "in use \(before) KiB with the cache full, \(after) KiB after 60k more names")
        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7"))
    }

    /// SIGUSR2 writes glibc's heap account (malloc_info(3)) to standard error, the figure the soak
    /// benchmark reads to tell memory in use from memory held free (docs/benchmarks.md "Soak"). Before, the
    /// signal's default action ended the helper.
    @Test func sigusr2_writes_the_allocator_report_and_the_helper_keeps_answering() throws {
        let scratch = try Scratch()
        let upstream = try QuietDnsmasq(scratch: scratch, ttl: 0)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7"))
        server.child.signal(SIGUSR2)
        let deadline = Date().addingTimeInterval(10)
        while !server.child.stderr.contains("</malloc>"), server.child.isRunning, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let report = server.child.stderr
        #expect(report.contains("<malloc version="), "\(report)")
        #expect(report.contains("<system type=\"current\""), "\(report)")
        #expect(report.contains("</malloc>"), "\(report)")
        #expect(server.child.isRunning)
        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7"))
    }

    /// RFC 8767: the upstream dies; a name whose answer expired is still answered, with TTL 30,
    /// and counted; a name never seen gets SERVFAIL. The stale answer is replayed from the cache
    /// for its 30 s without asking the dead upstream again.
    @Test func an_expired_answer_is_served_stale_when_the_upstream_is_dead_and_counted() throws {
        let scratch = try Scratch()
        let upstream = try QuietDnsmasq(scratch: scratch, ttl: 1)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], extra: ["--metrics", "127.0.0.1:0", "--upstream-timeout-ms", "300"])
        let metrics = try MetricsEndToEndTests.metricsPort(server)
        let fresh = try dig(server.port, ["+noall", "+answer", "host.test", "A"])
        #expect(fresh.contains("\t1\tIN\tA\t10.0.0.7"), "\(fresh)")
        upstream.kill()
        Thread.sleep(forTimeInterval: 1.5)
        let before = try MetricsEndToEndTests.Scrape(port: metrics)
        let stale = try dig(server.port, ["host.test", "A"])
        #expect(stale.contains("status: NOERROR"), "\(stale)")
        #expect(stale.contains("\t30\tIN\tA\t10.0.0.7"), "\(stale)")
        let again = try dig(server.port, ["+noall", "+answer", "host.test", "A"])
        #expect(again.contains("IN\tA\t10.0.0.7"), "\(again)")
        let never = try dig(server.port, ["never.fwd.test", "A"])
        #expect(never.contains("status: SERVFAIL"), "\(never)")
        let after = try MetricsEndToEndTests.Scrape(port: metrics)
        #expect(after.delta("scrolloff_dns_stale_answers_total", since: before) == 2, "\(after.text)")
        #expect(after.delta(#"scrolloff_dns_queries_total{result="servfail"}"#, since: before) == 1)

        // A third failure backs the upstream off; `doctor` then says what the stale answers hide.
        #expect(try dig(server.port, ["nobody.fwd.test", "A"]).contains("status: SERVFAIL"))
        let doctor = try run(Products.scrolloff, [
            "doctor", "--socket", server.controlSocket, "--resolv-conf", "/dev/null", "--nsswitch-conf", "/dev/null",
            "--probe-name", "host.test",
        ])
        let line = doctor.split(separator: "\n").first { $0.contains(" upstreams ") }.map(String.init) ?? ""
        #expect(line.hasPrefix("FAIL  upstreams ") && line.contains("every upstream is down: 127.0.0.1:\(upstream.port)"), "\(doctor)")
    }

    /// Forged replies (SPEC §9): all 65,536 IDs forged at the query's port, from the upstream's own address,
    /// before the real answer. Today's defences: 0x20 (the forgery has the wrong letter case) and
    /// the unwanted-reply threshold (the port is given up and the question asked over TCP).
    @Test func a_flood_of_every_id_at_the_query_port_poisons_nothing() throws {
        let scratch = try Scratch()
        let upstream = try AttackedUpstream(.flood, scratch: scratch)
        // A long upstream timeout gives the forgeries all the time they need (the flood takes ~4 s).
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], extra: ["--metrics", "127.0.0.1:0", "--upstream-timeout-ms", "8000"])
        let metrics = try MetricsEndToEndTests.metricsPort(server)
        let names = ["victim.test", "bank.victim.test"]
        for (index, name) in names.enumerated() {
            // The attacker floods one port at a time: on a loaded machine one flood took 10 s, and
            // the next query's flood, queued behind it, started after the upstream timeout.
            let deadline = Date().addingTimeInterval(30)
            while upstream.floods < index, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            let first = try dig(server.port, ["+time=10", "+short", name, "A"])
            #expect(first == "192.0.2.1\n", "\(name): \(first)")
            // From the cache now: what was stored is the real answer too.
            let cached = try dig(server.port, ["+short", name, "A"])
            #expect(cached == "192.0.2.1\n", "\(name) cached: \(cached)")
        }
        // The TCP retry answers before the attacker has sent all 65,536; let the last flood end.
        let deadline = Date().addingTimeInterval(20)
        while upstream.floods < 2, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(upstream.floods == 2, "\(upstream.queries)")
        for name in names {
            let cached = try dig(server.port, ["+short", name, "A"])
            #expect(cached == "192.0.2.1\n", "\(name) after the floods: \(cached)")
        }
        #expect(upstream.queries.filter { $0.hasPrefix("tcp ") }.count == 2, "\(upstream.queries)")
        let scrape = try MetricsEndToEndTests.Scrape(port: metrics)
        #expect(scrape["scrolloff_upstream_spoofing_retries_total"] == 2, "\(scrape.text)")
        #expect(scrape["scrolloff_upstream_unwanted_replies_total"] >= 2)
    }

    /// The 0x20 fallback: an upstream that lowercases the question over UDP still answers, over
    /// TCP, and every UDP query it saw had mixed case.
    @Test func an_upstream_that_does_not_preserve_case_is_asked_again_over_tcp() throws {
        let scratch = try Scratch()
        let upstream = try AttackedUpstream(.lowercase, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        #expect(try dig(server.port, ["+short", "some-long-name-with-letters.test", "A"]) == "192.0.2.1\n")
        let queries = upstream.queries
        #expect(queries.count == 2, "\(queries)")
        #expect(queries.first?.hasPrefix("udp ") == true && queries.last?.hasPrefix("tcp ") == true, "\(queries)")
        let udpName = queries.first.map { String($0.dropFirst(4)) } ?? ""
        #expect(udpName != udpName.lowercased() && udpName != udpName.uppercased(), "no 0x20 in \(udpName)")
    }
}
