import Foundation
import Testing

/// Curfews, edit locks, cooldowns and the trusted clock (SPEC §2, §3, §11) through the real helper
/// with its clocks faked by libfaketime (see ``FakeClock`` for which clocks each test fakes and why).
@Suite struct ClockEndToEndTests {
    static let instagram = "www.instagram.com"
    static let night = ["schedule", "add", "night", "--from", "23:00", "--to", "07:00", "--days", "mon", "--curfew",
                        "--entries", "instagram"]

    /// 2026-11-23 is a Monday. Every clock is faked and ticks from the start time, so the restart at
    /// 23:30 moves the boot clock forward as much as the wall clock: to the helper, 45 minutes really
    /// passed, and the trusted clock (anchor + boot-clock time elapsed) reads 23:30.
    @Test func curfew_added_at_2245_locks_edits_then_refuses_peek_and_use_at_2330() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port,
                                           environment: FakeClock.allClocks(startingAt: "2026-11-23 22:45:00"))

        let added = try helper.cli(Self.night)
        #expect(added.exitCode == 0, "\(added)")
        #expect(try shortA(helper.port, Self.instagram) == "10.20.30.40", "the curfew has not started at 22:45")

        // 22:45 is inside the edit lock (30 minutes before 23:00): neither loosening nor removing.
        let removed = try helper.cli(["schedule", "rm", "night"])
        #expect(removed.exitCode == 1 && removed.output.contains("locked until Tue 07:00"), "\(removed)")
        let loosened = try helper.cli(["schedule", "add", "night", "--from", "23:30", "--to", "06:00", "--days", "mon",
                                       "--curfew", "--entries", "instagram"])
        #expect(loosened.exitCode == 1 && loosened.output.contains("locked until Tue 07:00"), "\(loosened)")

        try helper.restart(environment: FakeClock.allClocks(startingAt: "2026-11-23 23:30:00"))
        let peek = try helper.cli(["peek", "instagram", "--skip-exercise"])
        // The time left is counted from the trusted clock: 23:30 to 07:00.
        #expect(peek.exitCode == 1 && peek.output.contains("curfew until Tue 07:00 — 7 h 30 min"), "\(peek)")
        let use = try helper.cli(["use", "instagram", "--for", "5m"])
        #expect(use.exitCode == 1 && use.output.contains("curfew until Tue 07:00"), "\(use)")
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")
    }

    /// Only the wall clock moves (the real boot clock is kept): someone sets the clock to 23:30 while
    /// the helper is stopped. Same boot, so the trusted clock is the anchor plus the boot-clock time
    /// really elapsed (seconds), the curfew has not started, and the jump is recorded as tampering.
    @Test func wall_clock_set_to_2330_while_stopped_does_not_start_the_curfew() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let clock = try scratch.file("clock", "@2026-11-23 22:45:00\n")
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port,
                                           environment: FakeClock.wallOnly(timestampFile: clock))
        let added = try helper.cli(Self.night)
        #expect(added.exitCode == 0, "\(added)")

        helper.stop()
        _ = try scratch.file("clock", "@2026-11-23 23:30:00\n")
        try helper.restart(environment: FakeClock.wallOnly(timestampFile: clock))
        #expect(try shortA(helper.port, Self.instagram) == "10.20.30.40", "trusted time is still about 22:45")
        let events = try helper.cli(["events", "--json"])
        #expect(events.exitCode == 0 && events.output.contains("tamper"), "\(events)")
    }
}

/// The system clock moved while the helper runs or while it is stopped (SPEC §11): the real boot
/// clock is kept (`FAKETIME_DONT_FAKE_MONOTONIC=1`) and only the wall clock is moved, through a
/// libfaketime timestamp file read on every call.
@Suite struct ClockJumpEndToEndTests {
    /// A command, asked again when the helper turned the connection away before reading it (exit 3:
    /// nothing was done, the control server never closes a request it is working on). With
    /// every clock at 720× the control socket's 5 s limit for a whole request is 7 real
    /// milliseconds, so a CLI that the loaded machine does not schedule within that is closed, as
    /// a client that stalls for 5 s would be. The answer itself is what these tests check.
    func ask(_ helper: RestartableHelper, _ arguments: [String]) throws -> Outcome {
        var outcome = try helper.cli(arguments)
        for _ in 0..<20 where outcome.exitCode == 3 {
            Thread.sleep(forTimeInterval: 0.05)
            outcome = try helper.cli(arguments)
        }
        return outcome
    }

    func balance(_ helper: RestartableHelper) throws -> Int {
        let wallet = try ask(helper, ["wallet", "--json"])
        #expect(wallet.exitCode == 0, "\(wallet)")
        return try #require(try jsonObject(wallet.output)["balance_seconds"] as? Int, "\(wallet)")
    }

    func tamperCount(_ helper: RestartableHelper) throws -> Int {
        let events = try ask(helper, ["events", "--json"])
        #expect(events.exitCode == 0, "\(events)")
        return events.output.components(separatedBy: "\"tamper\"").count - 1
    }

    @Test func clock_forward_2h30_keeps_the_cooldown_and_wall_clock_back_across_a_restart_adds_no_credit() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let clock = try scratch.file("clock", "+0\n")
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port,
                                           environment: FakeClock.wallOnly(timestampFile: clock))
        let blocked = try helper.cli(["block", "instagram"])
        #expect(blocked.exitCode == 0, "\(blocked)")
        #expect(try tamperCount(helper) == 0)

        // Past the 2 h cooldown by the wall clock, seconds by the boot clock.
        _ = try scratch.file("clock", "+2.5h\n")
        Thread.sleep(forTimeInterval: FakeClock.fileTakesEffect)
        // The refusal is decided by the trusted clock, which moved seconds, not 2.5 h.
        let unblock = try helper.cli(["unblock", "instagram"])
        #expect(unblock.exitCode == 1 && unblock.output.contains("cooldown until"), "\(unblock)")
        // The engine has no polling timer: it reads the clocks when a command or a due instant wakes
        // it, and writes the tamper event with the next commit. A blocked query is an urge, and the
        // urge batch is such a commit.
        #expect(try shortA(helper.port, "www.instagram.com") == "0.0.0.0")
        var seen = 0
        for _ in 0..<100 where seen == 0 {
            seen = try tamperCount(helper)
            if seen == 0 { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(seen == 1, "one jump, one event")

        let before = try balance(helper)
        helper.stop()
        _ = try scratch.file("clock", "-3h\n")
        try helper.restart(environment: FakeClock.wallOnly(timestampFile: clock))
        let after = try balance(helper)
        #expect(after <= before, "no credit earned twice: \(before) s before, \(after) s after")
        #expect(try tamperCount(helper) == seen + 1, "the clock set back while stopped is one more jump")
        let events = try ask(helper, ["events", "--json"]).output
        #expect(events.components(separatedBy: "The system clock moved back by").count - 1 == 1, "one jump back: \(events)")
        let stillRefused = try helper.cli(["unblock", "instagram"])
        #expect(stillRefused.exitCode == 1 && stillRefused.output.contains("cooldown"), "\(stillRefused)")
    }

    /// Earns once with every clock faked at 720× (one real second is 12 minutes, boot clock
    /// included, so the trusted clock runs fast too), then restarts with all clocks set back 75
    /// minutes. The boot clock reads behind the saved anchor, so the trusted clock resumes from the
    /// anchor (SPEC §11), records the jump back and earns nothing more that day, though another
    /// 60 blocked minutes pass.
    ///
    /// The engine's timer sleeps with `Task.sleep`, which libfaketime does not speed up here, so an
    /// award shows in `wallet` (computed at the trusted now) before the timer writes it; a blocked
    /// query (an urge, flushed within moments) brings the commit that writes it.
    @Test func clock_set_back_75_min_across_a_restart_earns_nothing_twice() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port,
                                           environment: FakeClock.allClocks(startingAt: "2026-11-23 10:00:00 x720"))
        let blocked = try ask(helper, ["block", "instagram"])
        #expect(blocked.exitCode == 0, "\(blocked)")
        var earned = 0
        for _ in 0..<100 where earned <= 120 {
            earned = try balance(helper)
            if earned <= 120 { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(earned == 420, "+5:00 for 60 blocked minutes on top of the 2 min starter credit")
        #expect(try shortA(helper.port, "www.instagram.com") == "0.0.0.0")
        var rows = ""
        for _ in 0..<50 where rows != "300" {
            rows = try sqlite(helper.database, "SELECT COALESCE(SUM(delta_seconds), 0) FROM ledger WHERE reason = 'earn'")
            if rows != "300" { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(rows == "300", "the award is in the ledger before the restart")

        try helper.restart(environment: FakeClock.allClocks(startingAt: "2026-11-23 10:05:00 x720"))
        // 6 real seconds are 72 minutes on the (fast) trusted clock: enough for another award if
        // the hour already paid for were counted again or earning went on after the jump back.
        Thread.sleep(forTimeInterval: 6)
        #expect(try balance(helper) == 420, "nothing earned twice")
        let events = try ask(helper, ["events", "--json"])
        #expect(events.output.contains("moved back"), "\(events)")
        #expect(try tamperCount(helper) == 1)
    }
}
