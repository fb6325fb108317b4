import Foundation
import Testing

/// The live event stream of the real helper (SPEC §12): readers that never read hold up neither
/// DNS nor a reader that keeps up, and `scrolloff watch` carries on after a restart of the helper
/// from the last event id it got, with nothing missed or shown twice.
@Suite(.serialized) struct EventStreamEndToEndTests {
    static let entries = ["instagram", "reddit", "9gag", "facebook", "imgur", "linkedin", "discord", "tiktok", "pinterest"]

    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// The CPU time process `pid` has used so far (user and system, /proc/PID/stat), in seconds.
    static func cpuSeconds(_ pid: pid_t) -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // After the command name's closing parenthesis: state is field 3, utime 14 and stime 15.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return .infinity }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Event ids in the helper's database from `first` on, in order.
    static func storedIDs(_ helper: RestartableHelper, from first: Int) throws -> [Int] {
        try sqlite(helper.database, "SELECT id FROM events WHERE id >= \(first) ORDER BY id").split(separator: "\n").compactMap { Int($0) }
    }

    @Test(.timeLimit(.minutes(2)))
    func a_hundred_readers_that_never_read_delay_neither_dns_answers_nor_a_reader_that_keeps_up() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        // Root's connections beyond its default share of 16, so 100 hanging readers fit.
        let config = try scratch.file("scrolloff.toml", """
            [helper]
            control_connections = 256
            control_connections_per_user = 128
            """)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port, arguments: ["--config", config])
        defer { helper.stop() }
        let blocked = try helper.cli(["block"] + Self.entries)
        #expect(blocked.exitCode == 0, "\(blocked)")

        // 100 readers connect and never read; a flood of 2,250 urges (9 blocked names from 250
        // loopback addresses, one episode each) fills their sockets; DNS is timed throughout.
        let cpuBefore = Self.cpuSeconds(helper.child.process.pid)
        let output = try run("/usr/bin/python3", [Self.repository + "/scripts/live/slow_readers.py", "\(helper.port)", helper.controlSocket,
                                                  Products.scrolloff])
        let cpu = Self.cpuSeconds(helper.child.process.pid) - cpuBefore
        let result = try jsonObject(String(output.split(separator: "\n").last ?? ""))
        let baseline = try #require(result["baseline_median"] as? Double, "\(output)")
        let loadedMedian = try #require(result["loaded_median"] as? Double)
        let loadedMax = try #require(result["loaded_max"] as? Double)
        print("event stream: DNS median \(Int(baseline * 1000)) ms before, \(Int(loadedMedian * 1000)) ms (max \(Int(loadedMax * 1000)) ms) "
              + "with 100 hanging readers through \(result["flood_seconds"] ?? "?") s of flood; adjust→reader \(result["delays"] ?? "?") s; "
              + "lagging reader: \((result["lagging_ids"] as? [Int])?.count ?? 0) events, dropped notice \(result["lagging_dropped"] ?? "none"); "
              + "helper CPU \(Int(cpu * 1000)) ms, \(Int(cpu / 2250 * 1_000_000)) µs per urge")
        // What an urge costs the helper, in CPU time, which other work on the box hardly moves
        // (wall times do): 2.8–4.2 ms per urge in a debug build when each reader encoded every
        // event and every urge was a commit; 0.6–0.85 ms since. The bound is halfway in ratio.
        #expect(cpu / 2250 < 0.0015, "the helper spent \(cpu) s of CPU on 2,250 urges and 100 readers")
        // What hanging readers would do is hold the helper up: answers seconds late (the first
        // version, one write per event, let one wait 2.3 s). Each reader encoding every event
        // itself and a commit per urge gave a median of 13–54 ms against 1–8 ms before the flood,
        // beside other builds; with each event encoded once and urges written in 250 ms batches,
        // 3–8 ms against 3–5 ms (docs/benchmarks.md "Urges and the event stream").
        #expect(loadedMedian < baseline * 2 + 0.01 && loadedMax < 1, "DNS answers slowed: \(baseline) → \(loadedMedian), max \(loadedMax)")

        // The reader that keeps up got every event, in the log's order, each adjustment within 1 s.
        let fast = try #require(result["fast_ids"] as? [Int])
        let kinds = try #require(result["fast_kinds"] as? [String])
        #expect(kinds.filter { $0 == "urge" }.count == 250 * Self.entries.count, "urges seen: \(kinds.filter { $0 == "urge" }.count)")
        #expect(fast == (try Self.storedIDs(helper, from: fast.first ?? 0)), "the reader's ids are the log's, all of them, in order")
        let delays = try #require(result["delays"] as? [Any])
        #expect(delays.count == 5 && delays.allSatisfy { ($0 as? Double).map { $0 < 1 } ?? false }, "\(delays)")

        // The reader that fell behind: what it got and what it got on resuming from its last id
        // are together exactly the events since it connected.
        let lagging = try #require(result["lagging_ids"] as? [Int])
        let resumed = try #require(result["resumed_ids"] as? [Int])
        let start = try #require(lagging.first ?? resumed.first)
        #expect(lagging + resumed == fast.filter { $0 >= start }, "lagging \(lagging.count) + resumed \(resumed.count) vs \(fast.count)")
        #expect(try helper.cli(["status"]).exitCode == 0, "the helper answers after it all")
    }

    /// SPEC §12: each event within 1 s of happening, an urge too (its batch is written within
    /// 250 ms of its first urge, then published with its row ids), with the helper run as people
    /// run it; the metrics count the readers, the events sent and the slowest reader's queue.
    @Test(.timeLimit(.minutes(1)), arguments: PrivilegeMode.allCases)
    func an_urge_reaches_a_stream_reader_within_a_second_and_the_metrics_count_the_readers(_ mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port, arguments: ["--metrics", "127.0.0.1:0"], mode: mode)
        defer { helper.stop() }
        let line = try helper.child.waitForLine { $0.hasPrefix("listening metrics 127.0.0.1:") }
        let metricsPort = try #require(line.split(separator: ":").last.flatMap { Int($0) }, "\(line)")
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)

        let output = try run("/usr/bin/python3", [Self.repository + "/scripts/live/urge_delay.py", "\(helper.port)", helper.controlSocket,
                                                  "\(metricsPort)"])
        let result = try jsonObject(String(output.split(separator: "\n").last ?? ""))
        let delays = try #require(result["delays"] as? [Any], "\(output)")
        print("event stream (\(mode.rawValue)): blocked query → urge on the reader \(delays) s; 40 urges in \(result["burst_chunks"] ?? "?") writes")
        #expect(delays.count == 6 && delays.allSatisfy { ($0 as? Double).map { $0 < 1 } ?? false }, "\(delays)")
        // A second of a flood (40 new episodes, 25 ms apart) is a few batches, each one commit and
        // one write to each reader; it was one of each per blocked query (40).
        let chunks = try #require(result["burst_chunks"] as? Int)
        #expect(result["burst_seen"] as? Int == 40, "\(result)")
        #expect(chunks <= 8, "40 urges in \(result["burst_seconds"] ?? "?") s reached the reader in \(chunks) writes")
        let metrics = try #require(result["metrics"] as? String)
        func value(_ series: String) -> Double? {
            metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        // The reader that keeps up and the one that never reads (more may follow: the [notify] hook's).
        #expect((value("scrolloff_event_stream_readers") ?? 0) >= 2, "\(metrics)")
        #expect((value("scrolloff_event_stream_events_sent_total") ?? 0) >= 6, "\(metrics)")
        #expect(value("scrolloff_event_stream_readers_dropped_total") == 0, "\(metrics)")
        // Exposed; the reader that never reads still has room in its socket for six urges, so
        // nothing waits in its queue (EventFeedTests count a queue that grows).
        #expect(value("scrolloff_event_stream_queue_depth").map { (0...1).contains($0) } == true, "a heartbeat may be on its way: \(metrics)")
        #expect(value("scrolloff_urges_pending") == 0, "every urge written: \(metrics)")
    }

    @Test(.timeLimit(.minutes(2)))
    func watch_carries_on_after_a_restart_of_the_helper_with_every_event_once_in_order() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }
        let watch = try Child(Products.scrolloff, ["watch", "--json", "--socket", helper.controlSocket], scratch: scratch, label: "watch")
        defer { watch.signal(SIGKILL) }
        // The watch is live once an event made now reaches it.
        var first: Int?
        for attempt in 0..<20 where first == nil {
            _ = try helper.cli(["adjust", "+1m", "--note", "hello \(attempt)"])
            if let line = try? watch.waitForLine(seconds: 0.5, { $0.contains("hello \(attempt)") }) {
                first = try jsonObject(line)["id"] as? Int
            }
        }
        let start = try #require(first, "watch never printed an event: \(watch.stdout) \(watch.stderr)")

        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        _ = try watch.waitForLine { $0.contains("\"ruleChange\"") }
        helper.stop()
        // While the helper is down the watch tries again; what happens at the next start and after is still shown.
        try helper.restart()
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        #expect(try helper.cli(["adjust", "+2m", "--note", "after the restart"]).exitCode == 0)
        _ = try watch.waitForLine(seconds: 40) { $0.contains("after the restart") }

        let printed = watch.stdout.split(separator: "\n").compactMap { try? jsonObject(String($0))["id"] as? Int }
        #expect(printed == (try Self.storedIDs(helper, from: start)), "watch printed \(printed); stderr \(watch.stderr)")
        #expect(watch.stderr.contains("Lost the helper") && watch.stderr.contains("Connected to the helper again"), "\(watch.stderr)")

        // A reader that says where it was (`Last-Event-ID`, as a browser does) gets exactly what came after.
        let resumeFrom = printed[printed.count / 2]
        let curl = try run("/usr/bin/curl", ["-s", "-N", "--max-time", "2", "--unix-socket", helper.controlSocket,
                                             "-H", "Accept: text/event-stream", "-H", "Last-Event-ID: \(resumeFrom)",
                                             "http://localhost/v1/events/stream"])
        let ids = curl.split(separator: "\n").filter { $0.hasPrefix("data: ") }.compactMap { line in
            try? jsonObject(String(line.dropFirst(6)))["id"] as? Int
        }
        #expect(ids == printed.filter { $0 > resumeFrom }, "\(curl)")
    }
}
