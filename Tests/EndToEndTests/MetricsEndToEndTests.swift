import Foundation
import TestSupport
import Testing

/// The Prometheus endpoint and the logs of the real helper (docs/operations.md "Metrics and logs"; SPEC §9 privacy).
@Suite struct MetricsEndToEndTests {
    /// One scrape with curl, parsed into `series → value` (`name{labels}` exactly as exposed).
    struct Scrape {
        let text: String
        let values: [String: Double]

        init(port: Int) throws {
            text = try run("/usr/bin/curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/metrics"])
            var values: [String: Double] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                values[String(line[..<space])] = value
            }
            self.values = values
        }

        subscript(_ series: String) -> Double { values[series] ?? -1 }
        func delta(_ series: String, since before: Scrape) -> Double { self[series] - before[series] }
    }

    static func metricsPort(_ server: Sinkhole) throws -> Int {
        let line = try server.child.waitForLine { $0.hasPrefix("listening metrics 127.0.0.1:") }
        guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else { throw HarnessError("metrics line: \(line)") }
        return port
    }

    @Test func scrape_counts_blocked_forwarded_and_cached_queries_and_their_latencies() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"], extra: ["--metrics", "127.0.0.1:0"])
        let port = try Self.metricsPort(server)
        let before = try Scrape(port: port)
        #expect(before.text.contains("# TYPE scrolloff_dns_queries_total counter"), "\(before.text)")
        #expect(before.text.contains("# TYPE scrolloff_dns_query_duration_seconds histogram"))

        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7")) // forwarded
        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7")) // cached
        #expect(try kdig(server.port, ["+tcp", "+short", "HOST.test", "A"]).contains("10.0.0.7")) // cached, over TCP
        #expect(try dig(server.port, ["+short", "x.blocked.test", "A"]).contains("0.0.0.0")) // blocked
        #expect(try dig(server.port, ["+short", "blocked.test", "AAAA"]).contains("::")) // blocked
        let after = try Scrape(port: port)

        #expect(after.delta(#"scrolloff_dns_queries_total{result="forwarded"}"#, since: before) == 1, "\(after.text)")
        #expect(after.delta(#"scrolloff_dns_queries_total{result="cached"}"#, since: before) == 2)
        #expect(after.delta(#"scrolloff_dns_queries_total{result="blocked"}"#, since: before) == 2)
        #expect(after.delta(#"scrolloff_dns_queries_total{result="servfail"}"#, since: before) == 0)
        #expect(after.delta("scrolloff_dns_query_duration_seconds_count", since: before) == 5)
        #expect(after.delta(#"scrolloff_dns_query_duration_seconds_bucket{le="+Inf"}"#, since: before) == 5)
        #expect(after.delta(#"scrolloff_dns_query_duration_seconds_bucket{le="2"}"#, since: before) == 5)
        #expect(after.delta("scrolloff_dns_query_duration_seconds_sum", since: before) > 0)
        #expect(after["scrolloff_cache_entries"] >= 1)
        #expect(after[#"scrolloff_upstream_up{upstream="127.0.0.1:\#(upstream.port)"}"#] == 1)
        #expect(after[#"scrolloff_upstream_failures_total{upstream="127.0.0.1:\#(upstream.port)"}"#] == 0)
        #expect(after[#"scrolloff_grants_active{profile="default"}"#] == 0)
        #expect(after.text.contains(#"scrolloff_build_info{version=""#))
    }

    /// SPEC §9 CNAME inspection: innocent.test is a CNAME to cdn.tracker.test upstream, and
    /// tracker.test is blocked. Both the first answer (rendered when the upstream replies) and the
    /// cached one count as blocked, not as forwarded or cached.
    @Test func an_answer_blocked_for_its_cname_chain_counts_as_blocked_fresh_and_cached() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], blocklist: ["tracker.test"], extra: ["--metrics", "127.0.0.1:0"])
        let port = try Self.metricsPort(server)
        let before = try Scrape(port: port)
        for _ in 0..<2 { #expect(try dig(server.port, ["+short", "innocent.test", "A"]) == "0.0.0.0\n") }
        let after = try Scrape(port: port)
        #expect(after.delta(#"scrolloff_dns_queries_total{result="blocked"}"#, since: before) == 2, "\(after.text)")
        #expect(after.delta(#"scrolloff_dns_queries_total{result="forwarded"}"#, since: before) == 0)
        #expect(after.delta(#"scrolloff_dns_queries_total{result="cached"}"#, since: before) == 0)
        #expect(upstream.queries(for: "innocent.test") == 1)
    }

    @Test func scrape_reports_each_downloaded_list_with_its_domains_and_age() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--metrics", "127.0.0.1:0"])
        let port = try Self.metricsPort(server)
        let list = try scratch.file("metrics-list.txt", "one.example\ntwo.example\nthree.example\n")
        let added = try run(Products.scrolloff, ["lists", "add", "file://\(list)", "--name", "metrics-list", "--socket", server.controlSocket])
        #expect(added.contains("metrics-list"), "\(added)")
        let scrape = try Scrape(port: port)
        #expect(scrape[#"scrolloff_list_domains{list="metrics-list"}"#] == 3, "\(scrape.text)")
        let age = scrape[#"scrolloff_list_age_seconds{list="metrics-list"}"#]
        #expect(age >= 0 && age < 60)
    }

    @Test func counts_an_unreachable_upstream_as_down_with_its_failures() throws {
        let scratch = try Scratch()
        let silent = try ScriptedUpstream(.silent, scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [silent.port], extra: ["--metrics", "127.0.0.1:0", "--upstream-timeout-ms", "100"])
        let port = try Self.metricsPort(server)
        // Three failures in a row back the upstream off (ForwarderConfiguration.failuresBeforeBackoff).
        for index in 0..<3 { #expect(try dig(server.port, ["nothing\(index).test", "A"]).contains("SERVFAIL")) }
        let scrape = try Scrape(port: port)
        #expect(scrape[#"scrolloff_upstream_up{upstream="127.0.0.1:\#(silent.port)"}"#] == 0, "\(scrape.text)")
        #expect(scrape[#"scrolloff_upstream_failures_total{upstream="127.0.0.1:\#(silent.port)"}"#] >= 3)
        #expect(scrape[#"scrolloff_dns_queries_total{result="servfail"}"#] == 3)
    }

    @Test func other_paths_are_404_and_other_methods_405() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--metrics", "127.0.0.1:0"])
        let port = try Self.metricsPort(server)
        let status = { (arguments: [String]) throws -> String in
            try run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5"] + arguments)
        }
        #expect(try status(["http://127.0.0.1:\(port)/"]) == "404")
        #expect(try status(["http://127.0.0.1:\(port)/metrics/extra"]) == "404")
        #expect(try status(["-X", "POST", "http://127.0.0.1:\(port)/metrics"]) == "405")
        #expect(try status(["http://127.0.0.1:\(port)/metrics?name[]=x"]) == "200")
    }

    @Test func metrics_are_off_unless_asked_for() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        // The household page listens on loopback by default (README); off here, so that with it the
        // only TCP socket left is the DNS one.
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--web-listen", "off"])
        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7"))
        #expect(!server.child.stdout.contains("metrics"), "\(server.child.stdout)")
        #expect(!server.child.stdout.contains("listening web"), "\(server.child.stdout)")
        // The only TCP socket the helper listens on is the DNS one. Tests run in parallel, so a
        // socket this test process had open when it spawned the helper may show under both pids;
        // that one is not the helper's own.
        let listening = try run("/usr/bin/ss", ["-Hltnp"]).split(separator: "\n").filter { $0.contains("pid=\(server.child.process.pid),") }
        #expect(listening.contains { $0.contains("127.0.0.1:\(server.port)") }, "\(listening)")
        let others = listening.filter { !$0.contains("127.0.0.1:\(server.port)") && !$0.contains("pid=\(getpid()),") }
        #expect(others.isEmpty, "\(listening)")
    }

    @Test func a_busy_or_malformed_metrics_address_stops_the_start_with_a_message_that_says_what_to_do() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let busy = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--metrics", "127.0.0.1:0"])
        let taken = try Self.metricsPort(busy)
        for (address, message) in [("127.0.0.1:\(taken)", "cannot serve metrics on 127.0.0.1:\(taken)"), ("localhost:9153", "--metrics")] {
            let child = try HelperLaunch(
                executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)],
                stateDirectory: "\(scratch.path)/state-\(UUID().uuidString)", controlSocket: "\(scratch.path)/c-\(UUID().uuidString).sock",
                extra: ["--metrics", address]
            ).spawn(scratch: scratch, label: "metrics-\(UUID().uuidString)")
            #expect(child.process.wait() != 0)
            #expect(child.stderr.contains(message), "\(child.stderr)")
        }
    }

    /// systemd.exec(5): JOURNAL_STREAM names stderr's device and inode when stderr is the journal.
    @Test func log_lines_carry_syslog_priorities_when_stderr_is_the_journal() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let label = "journal-\(UUID().uuidString)"
        // The harness writes stderr to this file; made first so its inode is known (truncation keeps it).
        let stderrPath = try scratch.file("\(label).err", "")
        var status = stat()
        #expect(stat(stderrPath, &status) == 0)
        let child = try HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)], stateDirectory: "\(scratch.path)/state",
            controlSocket: "\(scratch.path)/control.sock", environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino)"]
        ).spawn(scratch: scratch, label: label)
        _ = try child.waitForLine { $0.hasPrefix("listening udp") }
        child.signal(SIGTERM)
        _ = child.process.wait()
        let lines = child.stderr.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>scrolloff-dns: scrolloff-dns starting ") }, "\(child.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(child.stderr)")
    }

    /// SPEC §9: allowed names are never logged, at any level.
    @Test func allowed_query_names_never_reach_the_log_even_at_trace() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"],
            extra: ["--log-level", "trace", "--metrics", "127.0.0.1:0"])
        #expect(try dig(server.port, ["+short", "host.test", "A"]).contains("10.0.0.7"))
        #expect(try dig(server.port, ["+short", "innocent.test", "A"]).contains("10.9.9.9"))
        #expect(try kdig(server.port, ["+tcp", "+short", "host.test", "MX"]) == "")
        _ = try dig(server.port, ["+short", "missing-name.test", "A"])
        server.child.signal(SIGTERM)
        _ = server.child.process.wait()
        let log = server.child.stderr.lowercased()
        // The log was written at trace: the lifecycle's debug lines are there.
        #expect(log.contains(" debug "), "\(log)")
        for name in ["host.test", "innocent.test", "cdn.tracker.test", "missing-name.test"] {
            #expect(!log.contains(name), "\(name) in the log")
        }
    }
}
