import Foundation
import Testing

/// Found after the digest was built (SPEC §7): a digest hook running when the helper stopped outlived it (nothing signalled
/// it), and it started with what the helper ignored still ignored. Now the hook starts with default
/// signal dispositions in its own process group, and the helper's stop ends it with SIGTERM (SIGKILL
/// only after the 2 s grace). On the old helper this test fails: all three processes keep running.
@Suite("Digest hook at the helper's stop")
struct DigestHookStopEndToEndTests {
    /// `$1` is the folder for what the hook says. The default profile's hook traps SIGTERM (the marker
    /// proves the signal arrived and could be trapped) and waits on a `sleep` it started; the kid's
    /// traps nothing and becomes `sleep` itself, so only SIGTERM's default action can end it.
    static let hook = """
        #!/bin/sh
        dir="$1"
        if [ "$SCROLLOFF_PROFILE" = kid ]; then
          echo $$ > "$dir/kid.pid"
          exec sleep 120
        fi
        trap 'echo "$SCROLLOFF_PROFILE" > "$dir/term"; exit 0' TERM
        sleep 120 &
        echo $! > "$dir/sleep.pid"
        echo $$ > "$dir/default.pid"
        wait
        """

    static func alive(_ pid: Int32) -> Bool {
        // A zombie has exited; /proc/PID/stat's third field is its state.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    /// The signals `pid` ignores, from `SigIgn` in /proc/PID/status (bit n-1 is signal n).
    static func ignoredSignals(_ pid: Int32) -> [Int32] {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
              let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return [] }
        return (1...64).filter { mask >> UInt64($0 - 1) & 1 == 1 }.map { Int32($0) }
    }

    @Test(.timeLimit(.minutes(2)))
    func running_digest_hooks_get_sigterm_and_are_gone_when_the_helper_stops() throws {
        let scratch = try Scratch()
        // Run as `/bin/sh FILE`, not exec'd itself: a process another test spawned while this file was
        // open for writing may hold that descriptor, and exec of the file would fail with ETXTBSY.
        let hook = try scratch.file("hook", Self.hook)
        let said = "\(scratch.path)/said"
        try FileManager.default.createDirectory(atPath: said, withIntermediateDirectories: true)
        let config = try scratch.file("scrolloff.toml", """
            [digest]
            command = ["/bin/sh", "\(hook)", "\(said)"]
            timeout = "5min"

            [profile]
            time_zone = "UTC"

            [[profiles]]
            name = "kid"
            clients = ["127.0.0.2/32"]
            time_zone = "UTC"
            """)
        // Saturday 2026-11-21 (after the build date, so the clock is trusted), then Monday 08:00: the
        // week's digest (Sunday 19:00) was missed while the helper was down and is written at the start.
        let helper = try RestartableHelper(scratch: scratch, upstream: 9, environment: FakeClock.allClocks(startingAt: "2026-11-21 12:00:00"),
                                           arguments: ["--config", config])
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        #expect(try helper.cli(["block", "instagram", "--profile", "kid"]).exitCode == 0)
        try helper.restart(environment: FakeClock.allClocks(startingAt: "2026-11-23 08:00:00"))

        var pids: [Int32] = []
        defer { for pid in pids where Self.alive(pid) { kill(pid, SIGKILL) } } // what the old helper left behind
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            pids = ["default.pid", "sleep.pid", "kid.pid"].compactMap {
                (try? String(contentsOfFile: "\(said)/\($0)", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            }
            if pids.count == 3 { break }
            usleep(50_000)
        }
        try #require(pids.count == 3, "both hooks run: \(helper.child.stderr)")
        #expect(pids.allSatisfy(Self.alive))
        // Nothing the helper ignores is ignored in the hooks (the old helper's hooks: SIGQUIT, SIGPIPE).
        // Not the `sleep &` of the first: sh itself starts background jobs with SIGINT and SIGQUIT ignored.
        for pid in [pids[0], pids[2]] {
            let ignored = Self.ignoredSignals(pid)
            #expect([SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR2].allSatisfy { !ignored.contains($0) }, "pid \(pid) ignores \(ignored)")
        }

        let stopping = Date()
        helper.stop()
        let took = Date().timeIntervalSince(stopping)
        // Orphans are reaped by init a moment after the helper is gone.
        let gone = Date().addingTimeInterval(1)
        while pids.contains(where: Self.alive), Date() < gone { usleep(20_000) }
        #expect(!pids.contains(where: Self.alive), "hook processes outlived the helper: \(pids.filter(Self.alive))")
        #expect((try? String(contentsOfFile: "\(said)/term", encoding: .utf8)) == "default\n", "the trapping hook got SIGTERM")
        let log = helper.child.stderr
        #expect(log.contains("digest hook ended by the helper's stop (SIGTERM)"), "\(log)")
        #expect(log.contains("digest hook ended by the helper's stop (exit status 0)"), "\(log)")
        #expect(!log.contains("SIGKILL"), "\(log)")
        // SIGKILL would have come only after the 2 s grace; SIGTERM ended both at once.
        #expect(took < 5, "the stop took \(took) s")
    }
}
