import Testing
@testable import ScrollOffCore

/// SPEC §11 clock recovery: the trusted clock moves back only for NTP-synchronised time (or root's
/// `clock reset`, in the helper), and what a wallet holds on the wrong clock is cut back with it.
@Suite struct ClockRecoveryTests {
    static let build = RulesTime.utc("2026-11-01T00:00:00Z")
    static let t0 = RulesTime.utc("2026-11-21T20:00:00Z")
    static let hour: UInt64 = 3_600_000_000_000
    static let minute: UInt64 = 60_000_000_000

    static func reading(wall: Instant, boot: UInt64, synchronised: Bool, id: String = "boot-a") -> ClockReading {
        ClockReading(wall: wall, monotonicNanoseconds: boot, bootNanoseconds: boot, bootID: id, wallSynchronised: synchronised)
    }

    /// A first start with the wall clock 3 h ahead (a `faketime` start, a router's RTC) anchors
    /// the trusted clock there; the next start of the same boot sees the right wall clock behind it.
    static func poisonedAnchor() -> ClockAnchor {
        let first = TrustedClock(anchor: nil, buildDate: build, reading: reading(wall: t0 + .hours(3), boot: hour, synchronised: false))
        return first.anchor
    }

    @Test func a_start_three_hours_ahead_then_an_unsynchronised_start_keeps_the_trusted_clock_ahead() {
        let clock = TrustedClock(anchor: Self.poisonedAnchor(), buildDate: Self.build,
                                 reading: Self.reading(wall: Self.t0 + .minutes(1), boot: Self.hour + Self.minute, synchronised: false))
        // The old rule: nothing a member can do moves it back, and without NTP nothing does.
        #expect(clock.now == Self.t0 + .hours(3) + .minutes(1))
        #expect(clock.startJump?.direction == .back && clock.startJump?.correction == nil)
    }

    @Test func a_start_three_hours_ahead_then_a_start_with_synchronised_time_follows_it_back() throws {
        let wall = Self.t0 + .minutes(1)
        let clock = TrustedClock(anchor: Self.poisonedAnchor(), buildDate: Self.build,
                                 reading: Self.reading(wall: wall, boot: Self.hour + Self.minute, synchronised: true))
        #expect(clock.now == wall && clock.basis == .wallClock)
        let jump = try #require(clock.startJump)
        #expect(jump == ClockJump(direction: .back, wall: wall, trusted: wall, offset: .hours(-3), correction: .ntpSynchronised))
        // A correction freezes no earning: every hour the clock counted really passed.
        #expect(jump.earningFrozenUntil(in: LocalCalendar(identifier: "UTC")!) == nil)
        #expect(clock.anchor.trusted == wall)
    }

    @Test func while_running_the_clock_follows_synchronised_time_back_once_and_then_advances_from_it() throws {
        var clock = TrustedClock(anchor: Self.poisonedAnchor(), buildDate: Self.build,
                                 reading: Self.reading(wall: Self.t0 + .minutes(1), boot: Self.hour + Self.minute, synchronised: false))
        // NTP synchronises two minutes later.
        let wall = Self.t0 + .minutes(3)
        let seen = clock.advance(to: Self.reading(wall: wall, boot: Self.hour + 3 * Self.minute, synchronised: true))
        let jump = try #require(seen)
        #expect(jump.correction == .ntpSynchronised && jump.offset == .hours(-3))
        #expect(clock.now == wall)
        #expect(clock.advance(to: Self.reading(wall: wall + .minutes(1), boot: Self.hour + 4 * Self.minute, synchronised: true)) == nil)
        #expect(clock.now == wall + .minutes(1))
        #expect(clock.instant(atBootNanoseconds: Self.hour + 5 * Self.minute) == wall + .minutes(2))
    }

    @Test(arguments: [Span.minutes(10), .minutes(5), .zero])
    func synchronised_time_within_the_jump_threshold_moves_nothing(behind: Span) {
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour, synchronised: true))
        let jump = clock.advance(to: Self.reading(wall: Self.t0 + .minutes(20) - behind, boot: Self.hour + 20 * Self.minute, synchronised: true))
        #expect(jump == nil && clock.now == Self.t0 + .minutes(20))
    }

    @Test func synchronised_time_never_moves_the_clock_forward_and_a_wall_before_the_build_never_counts() {
        var clock = TrustedClock(anchor: nil, buildDate: Self.build, reading: Self.reading(wall: Self.t0, boot: Self.hour, synchronised: true))
        let ahead = clock.advance(to: Self.reading(wall: Self.t0 + .hours(5), boot: Self.hour + Self.minute, synchronised: true))
        #expect(ahead?.direction == .forward && ahead?.correction == nil && clock.now == Self.t0 + .minutes(1))
        let tooEarly = clock.advance(to: Self.reading(wall: Self.build - .hours(24), boot: Self.hour + 2 * Self.minute, synchronised: true))
        #expect(tooEarly?.correction == nil && clock.now == Self.t0 + .minutes(2))
    }

    @Test func after_a_reboot_a_trusted_clock_decades_ahead_comes_back_only_with_synchronised_time() {
        let anchor = ClockAnchor(trusted: RulesTime.utc("2061-01-01T00:00:00Z"), bootNanoseconds: Self.hour, bootID: "boot-a")
        let unsynchronised = TrustedClock(anchor: anchor, buildDate: Self.build,
                                          reading: Self.reading(wall: Self.t0, boot: Self.minute, synchronised: false, id: "boot-b"))
        #expect(unsynchronised.now == anchor.trusted && unsynchronised.basis == .lastTrusted)
        let synchronised = TrustedClock(anchor: anchor, buildDate: Self.build,
                                        reading: Self.reading(wall: Self.t0, boot: Self.minute, synchronised: true, id: "boot-b"))
        #expect(synchronised.now == Self.t0 && synchronised.startJump?.correction == .ntpSynchronised)
    }

    // MARK: the wallet on a corrected clock

    func funded(_ seconds: Int64, at t: Instant) -> WalletHarness {
        var knobs = Preset.strict.knobs
        knobs.starterCredit = .seconds(seconds)
        var h = WalletHarness(knobs, zone: "UTC", start: t)
        h.record(h.wallet.grantStarter(at: t))
        return h
    }

    @Test func a_spend_opened_on_a_clock_three_hours_ahead_ends_at_the_correction_and_charges_nothing_more() throws {
        let poisoned = Self.t0 + .hours(3)
        var h = funded(600, at: poisoned)
        try h.use("instagram", at: poisoned)
        h.advance(to: poisoned + .seconds(30))
        #expect(h.balance == 570)
        let corrected = Self.t0 + .seconds(31)
        h.record(h.wallet.rewind(to: corrected))
        #expect(h.wallet.state.spend == nil && h.wallet.grantsInUse.isEmpty)
        #expect(h.wallet.state.asOf == corrected)
        // Real time runs on: nothing more is charged for the spend.
        h.advance(to: corrected + .hours(4))
        #expect(h.rows(.spend).reduce(0) { $0 + $1.deltaSeconds } == -30)
        #expect(h.rows(.spend).allSatisfy { $0.time <= poisoned + .seconds(30) })
        #expect(h.balance == h.ledgerSum)
        let ended = h.events.compactMap { event -> CreditEvent.GrantEndReason? in
            if case .grantEnded(_, let reason) = event.kind { return reason }
            return nil
        }
        #expect(ended == [.clockCorrected])
    }

    // MARK: a spend running while the helper is down (SPEC §4, §11)

    @Test func a_spend_running_when_the_helper_was_killed_is_charged_up_to_its_last_run_and_not_for_the_downtime() throws {
        var h = funded(600, at: Self.t0)
        try h.use("instagram", at: Self.t0)
        h.advance(to: Self.t0 + .seconds(20)) // the last commit
        // Killed; started again 5 minutes later.
        h.record(h.wallet.resume(at: Self.t0 + .minutes(5) + .seconds(20), blockInForce: true, lastRun: Self.t0 + .seconds(20)))
        #expect(h.balance == 580 && h.ledgerSum == 580)
        #expect(h.wallet.state.spend == nil && h.wallet.grantsInUse.isEmpty)
        h.advance(to: Self.t0 + .minutes(30))
        #expect(h.balance == 580)
    }

    @Test func without_a_later_run_the_spend_ends_at_the_last_settlement() throws {
        var h = funded(600, at: Self.t0)
        try h.use("instagram", for: .minutes(5), at: Self.t0)
        h.advance(to: Self.t0 + .seconds(42))
        h.record(h.wallet.resume(at: Self.t0 + .hours(2), blockInForce: true))
        #expect(h.balance == 558)
    }

    @Test func a_spend_that_reached_its_limit_before_the_last_run_ends_as_it_did() throws {
        var h = funded(600, at: Self.t0)
        try h.use("instagram", for: .minutes(1), at: Self.t0)
        h.record(h.wallet.resume(at: Self.t0 + .hours(1), blockInForce: true, lastRun: Self.t0 + .minutes(3)))
        #expect(h.balance == 540)
        let reasons = h.events.compactMap { event -> CreditEvent.GrantEndReason? in
            if case .grantEnded(_, let reason) = event.kind { return reason }
            return nil
        }
        #expect(reasons == [.limitReached])
    }
}
