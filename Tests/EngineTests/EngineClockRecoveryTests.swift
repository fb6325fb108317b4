import ControlAPI
@testable import Helper
import ControlServer
import ScrollOffCore
@testable import Store
import Testing

/// SPEC §11 clock recovery and SPEC §4 downtime through the engine: a trusted clock started ahead
/// comes back only for NTP-synchronised time (the sync status is injected, as the kernel's cannot
/// be changed in a test), and a spend running when the helper stops charges nothing for the gap.
@Suite("Engine: the trusted clock's way back and spends across a stop")
struct EngineClockRecoveryTests {
    static let instagram = "www.instagram.com"

    /// The first start ever sees a wall clock 3 h ahead (a faketime start, a router's RTC); a
    /// minute later the helper starts again on the right wall clock, same boot.
    @Test(arguments: [true, false])
    func a_start_three_hours_ahead_then_a_start_with_the_right_clock_comes_back_only_if_ntp_synchronised(synchronised: Bool) async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon + .hours(3))
        let lockedUntil: Instant?
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.block(["instagram"], reason: "exams")
            _ = try await engine.peek("instagram")
            #expect(await !engine.decision(Self.instagram).blocked, "the peek opens it")
            lockedUntil = try await StatusReport(engine.status()).entries.first { $0.id == "instagram" }?.lockedUntil
        }
        time.pass(.minutes(1))
        time.setWall(by: .hours(-3))
        time.setSynchronised(synchronised)
        let engine = try await Fixture.start(dir, time)
        let now = await engine.trustedNow()
        let tamper = try await engine.events().map(EventReport.init).filter { $0.kind == "tamper" }
        if synchronised {
            #expect(now == Fixture.noon + .minutes(1))
            #expect(tamper.contains { $0.message?.contains("moved back to the system clock, which NTP keeps synchronised") ?? false }, "\(tamper)")
            // The peek was opened on the wrong clock: it is closed, not left open for 3 h.
            #expect(try await StatusReport(engine.status()).grants.isEmpty)
            #expect(await engine.decision(Self.instagram).blocked)
        } else {
            #expect(now == Fixture.noon + .hours(3) + .minutes(1))
            #expect(tamper.allSatisfy { $0.message?.contains("NTP") != true })
        }
        // Either way the lock keeps its absolute instant: it ends at the same moment it always did.
        let after = try await StatusReport(engine.status()).entries.first { $0.id == "instagram" }?.lockedUntil
        #expect(after == lockedUntil && lockedUntil != nil)
        let check = try #require(try await engine.store.verifyLedger().first)
        #expect(check.isConsistent)
    }

    @Test func a_running_helper_follows_ntp_back_at_its_next_tick_and_ends_the_spend_opened_on_the_wrong_clock() async throws {
        let time = TestTimeSource(wall: Fixture.noon + .hours(3))
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        _ = try await engine.use("instagram")
        time.pass(.seconds(30))
        time.setWall(by: .hours(-3))
        try await engine.tick()
        #expect(await engine.trustedNow() == Fixture.noon + .hours(3) + .seconds(30), "not synchronised: the trusted clock stays")
        #expect(await !engine.decision(Self.instagram).blocked)
        let balance = try await WalletReport(engine.wallet()).balanceSeconds

        time.pass(.seconds(10))
        time.setSynchronised(true)
        try await engine.tick()
        #expect(await engine.trustedNow() == Fixture.noon + .seconds(40))
        #expect(await engine.decision(Self.instagram).blocked)
        #expect(try await StatusReport(engine.status()).grants.isEmpty)
        // Charged for the spend's 30 s, and nothing once the clock moved back.
        #expect(balance == 90)
        time.pass(.minutes(10))
        try await engine.tick()
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 90)
        let events = try await engine.events().map(EventReport.init)
        #expect(events.contains { $0.kind == "tamper" && ($0.message?.contains("NTP keeps synchronised") ?? false) })
        let check = try #require(try await engine.store.verifyLedger().first)
        #expect(check.isConsistent && check.balanceSeconds == 90)
    }

    /// SPEC §4 and §11: the helper is killed 20 s into a spend (its last commit then) and starts
    /// again 5 minutes later: the spend ends where the helper last ran, charged 20 s, not 5 min 20 s
    /// (which the 2 min of starter credit could not even pay).
    @Test func a_spend_running_when_the_helper_is_killed_charges_nothing_for_the_downtime_and_does_not_reopen() async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon)
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.block(["instagram"])
            _ = try await engine.use("instagram")
            time.pass(.seconds(20))
            try await engine.tick()
            #expect(try await WalletReport(engine.wallet()).balanceSeconds == 100)
        }
        time.pass(.minutes(5))
        let engine = try await Fixture.start(dir, time)
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 100)
        #expect(try await StatusReport(engine.status()).grants.isEmpty)
        #expect(await engine.decision(Self.instagram).blocked)
        let ended = try await engine.events().map(EventReport.init).filter { $0.message?.contains("because the helper stopped") ?? false }
        #expect(ended.count == 1, "\(ended)")
        let check = try #require(try await engine.store.verifyLedger().first)
        #expect(check.isConsistent && check.balanceSeconds == 100)
        // And it can be opened again at once.
        _ = try await engine.use("instagram")
        #expect(await !engine.decision(Self.instagram).blocked)
    }
}
