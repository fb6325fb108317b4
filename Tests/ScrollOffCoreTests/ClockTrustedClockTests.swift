import Testing
import ScrollOffCore

/// SPEC §11: the trusted clock at start, while running, and its tamper events.
@Suite struct ClockTrustedClockTests {
    static let build = RulesTime.utc("2026-11-01T00:00:00Z")
    static let t0 = RulesTime.utc("2026-11-21T20:00:00Z")
    static let hour: UInt64 = 3_600_000_000_000
    static let minute: UInt64 = 60_000_000_000

    static func reading(wall: Instant, boot: UInt64, mono: UInt64? = nil, id: String = "boot-a") -> ClockReading {
        ClockReading(wall: wall, monotonicNanoseconds: mono ?? boot, bootNanoseconds: boot, bootID: id)
    }

    static let anchor = ClockAnchor(trusted: t0, bootNanoseconds: 5 * hour, bootID: "boot-a")

    @Test func first_start_takes_the_wall_clock() {
        let clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour))
        #expect(clock.now == Self.t0 && clock.basis == .wallClock && clock.startJump == nil)
    }

    @Test func restart_same_boot_honest_clock_has_no_jump() {
        let r = Self.reading(wall: Self.t0 + .hours(1), boot: 6 * Self.hour)
        let clock = TrustedClock(anchor: Self.anchor, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.t0 + .hours(1) && clock.basis == .sameBootElapsed && clock.startJump == nil)
    }

    @Test func restart_same_boot_clock_moved_forward_uses_boot_clock_and_reports_jump() {
        // Helper stopped 1 h; meanwhile the wall clock was moved 3 h forward.
        let r = Self.reading(wall: Self.t0 + .hours(4), boot: 6 * Self.hour)
        let clock = TrustedClock(anchor: Self.anchor, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.t0 + .hours(1))
        #expect(clock.startJump == ClockJump(direction: .forward, wall: Self.t0 + .hours(4), trusted: Self.t0 + .hours(1), offset: .hours(3)))
    }

    @Test func restart_same_boot_clock_moved_back_reports_jump_and_freezes_earning_until_midnight() throws {
        let r = Self.reading(wall: Self.t0 - .hours(2), boot: 6 * Self.hour)
        let clock = TrustedClock(anchor: Self.anchor, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.t0 + .hours(1))
        let jump = try #require(clock.startJump)
        #expect(jump.direction == .back && jump.offset == .hours(-3))
        let berlin = try #require(LocalCalendar(identifier: "Europe/Berlin"))
        // Trusted 22:00 Berlin on 2026-11-21 → frozen until 2026-11-22 00:00 Berlin.
        #expect(jump.earningFrozenUntil(in: berlin) == RulesTime.local("2026-11-22 00:00", "Europe/Berlin"))
    }

    @Test func restart_new_boot_clock_moved_forward_is_taken_because_power_off_time_is_unknown() {
        let r = Self.reading(wall: Self.t0 + .hours(5), boot: Self.minute, id: "boot-b")
        let clock = TrustedClock(anchor: Self.anchor, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.t0 + .hours(5) && clock.basis == .wallClock && clock.startJump == nil)
    }

    @Test func restart_new_boot_clock_set_before_last_trusted_resumes_from_anchor_and_reports_jump_back() {
        let r = Self.reading(wall: Self.t0 - .hours(2), boot: Self.minute, id: "boot-b")
        let clock = TrustedClock(anchor: Self.anchor, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.t0 && clock.basis == .lastTrusted)
        #expect(clock.startJump?.direction == .back)
    }

    @Test func restart_new_boot_small_difference_is_not_a_jump() {
        let r = Self.reading(wall: Self.t0 - .minutes(9), boot: Self.minute, id: "boot-b")
        let clock = TrustedClock(anchor: Self.anchor, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.t0 && clock.startJump == nil)
    }

    @Test func wall_clock_before_build_date_is_ignored_until_ntp_sets_it() {
        // A router without RTC boots in 1970.
        let r = Self.reading(wall: Instant(secondsSince1970: 30), boot: 30_000_000_000, id: "boot-b")
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.build && clock.basis == .awaitingWallClock && clock.startJump == nil)
        // 1 min later, still 1970: the trusted clock advances from the build date, no jump.
        #expect(clock.advance(to: Self.reading(wall: Instant(secondsSince1970: 90), boot: 90_000_000_000, id: "boot-b")) == nil)
        #expect(clock.now == Self.build + .minutes(1))
        // NTP arrives: the wall clock is taken without a tamper event.
        #expect(clock.advance(to: Self.reading(wall: Self.t0, boot: 100_000_000_000, id: "boot-b")) == nil)
        #expect(clock.now == Self.t0 && clock.basis == .wallClock)
        #expect(clock.advance(to: Self.reading(wall: Self.t0 + .minutes(1), boot: 160_000_000_000, id: "boot-b")) == nil)
        #expect(clock.now == Self.t0 + .minutes(1))
    }

    @Test func wall_clock_before_build_date_uses_last_trusted_when_newer() {
        let r = Self.reading(wall: Instant(secondsSince1970: 30), boot: 30_000_000_000, id: "boot-b")
        let clock = TrustedClock(anchor: Self.anchor, buildDate: Self.build, reading: r)
        #expect(clock.now == Self.t0 && clock.basis == .awaitingWallClock)
    }

    @Test func running_clock_reports_a_forward_jump_once_then_a_back_jump() {
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour))
        // 5 min pass honestly.
        #expect(clock.advance(to: Self.reading(wall: Self.t0 + .minutes(5), boot: Self.hour + 5 * Self.minute)) == nil)
        // Someone moves the clock 2 h forward.
        let forward = clock.advance(to: Self.reading(wall: Self.t0 + .minutes(126), boot: Self.hour + 6 * Self.minute))
        #expect(forward == ClockJump(direction: .forward, wall: Self.t0 + .minutes(126), trusted: Self.t0 + .minutes(6), offset: .hours(2)))
        // Still 2 h ahead a minute later: the same jump, not reported again.
        #expect(clock.advance(to: Self.reading(wall: Self.t0 + .minutes(127), boot: Self.hour + 7 * Self.minute)) == nil)
        // Moved 3 h back: now 1 h behind.
        let back = clock.advance(to: Self.reading(wall: Self.t0 - .minutes(52), boot: Self.hour + 8 * Self.minute))
        #expect(back?.direction == .back && back?.offset == .hours(-1) && clock.now == Self.t0 + .minutes(8))
    }

    @Test func drift_under_ten_minutes_is_not_a_jump() {
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour))
        #expect(clock.advance(to: Self.reading(wall: Self.t0 + .minutes(11), boot: Self.hour + 2 * Self.minute)) == nil)
        #expect(clock.agrees(withWall: Self.t0 + .minutes(11)))
        #expect(!clock.agrees(withWall: Self.t0 + .minutes(13)))
    }

    @Test func suspend_counts_on_the_boot_clock_so_waking_up_is_not_a_jump() {
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour, mono: Self.hour))
        // Laptop slept 8 h: CLOCK_MONOTONIC stood still, CLOCK_BOOTTIME and the wall clock moved on.
        let woke = Self.reading(wall: Self.t0 + .hours(8), boot: 9 * Self.hour, mono: Self.hour + Self.minute)
        #expect(clock.advance(to: woke) == nil)
        #expect(clock.now == Self.t0 + .hours(8))
    }

    @Test func trusted_clock_never_runs_backwards_on_a_bogus_reading() {
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour))
        _ = clock.advance(to: Self.reading(wall: Self.t0 + .hours(1), boot: 2 * Self.hour))
        _ = clock.advance(to: Self.reading(wall: Self.t0, boot: Self.hour / 2, mono: 0))
        #expect(clock.now == Self.t0 + .hours(1))
    }

    @Test func anchor_round_trips_through_a_restart() {
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour))
        _ = clock.advance(to: Self.reading(wall: Self.t0 + .minutes(30), boot: Self.hour + 30 * Self.minute))
        let saved = clock.anchor
        #expect(saved == ClockAnchor(trusted: Self.t0 + .minutes(30), bootNanoseconds: Self.hour + 30 * Self.minute, bootID: "boot-a"))
        let restarted = TrustedClock(anchor: saved, buildDate: Self.build,
                                     reading: Self.reading(wall: Self.t0 + .minutes(40), boot: Self.hour + 40 * Self.minute))
        #expect(restarted.now == Self.t0 + .minutes(40) && restarted.basis == .sameBootElapsed)
    }
}

@Suite struct ClockHotPathTests {
    @Test func instant_at_boot_reading_follows_the_boot_clock_and_never_goes_back() {
        let t0 = RulesTime.utc("2026-11-21T20:00:00Z")
        var clock = TrustedClock(anchor: nil, buildDate: RulesTime.utc("2026-11-01T00:00:00Z"),
                                 reading: ClockReading(wall: t0, monotonicNanoseconds: 1_000_000_000, bootNanoseconds: 1_000_000_000, bootID: "a"))
        #expect(clock.instant(atBootNanoseconds: 3_500_000_000) == t0 + Span(milliseconds: 2500))
        _ = clock.advance(to: ClockReading(wall: t0 + .seconds(10), monotonicNanoseconds: 11_000_000_000, bootNanoseconds: 11_000_000_000, bootID: "a"))
        #expect(clock.instant(atBootNanoseconds: 5_000_000_000) == t0 + .seconds(10))
        #expect(clock.instant(atBootNanoseconds: 0) == t0 + .seconds(10))
    }
}
