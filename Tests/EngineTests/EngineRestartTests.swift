import ControlAPI
import ControlServer
import Enforcement
import Engine
import Helper
import ScrollOffCore
import Testing

@Suite("Engine: restarts and the trusted clock")
struct EngineRestartTests {
    static let names = ["www.instagram.com", "www.reddit.com", "news.example.com", "www.youtube.com", "www.tiktok.com", "example.org"]

    @Test func restart_restores_everything_and_decisions_are_identical() async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon)
        var before: [EnforcementDecision] = []
        let statusBefore: StatusReport
        let walletBefore: WalletReport
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.block(["instagram", "news.example.com"], reason: "exams")
            _ = try await engine.addSchedule(ScheduleRequest(name: "evenings", from: "18:00", to: "23:00", entries: ["reddit", "youtube"]))
            _ = try await engine.addProfile("kids", clients: ["10.0.0.0/8"])
            _ = try await engine.block(["tiktok"], profile: "kids")
            // A peek, paid in advance, runs on across a restart; a spend ends where the helper last
            // ran (SPEC §4, EngineClockRecoveryTests).
            _ = try await engine.peek("instagram")
            _ = try await engine.addPlan(when: "I can't sleep", then: "I will read a page")
            _ = try await engine.addAlternative("stretch for a minute")
            time.pass(.seconds(20))
            for client in ["127.0.0.1", "10.0.0.9"] {
                for name in Self.names { before.append(await engine.decision(name, client: client)) }
            }
            statusBefore = try await StatusReport(engine.status())
            walletBefore = try await WalletReport(engine.wallet())
        }
        let engine = try await Fixture.start(dir, time)
        var after: [EnforcementDecision] = []
        for client in ["127.0.0.1", "10.0.0.9"] {
            for name in Self.names { after.append(await engine.decision(name, client: client)) }
        }
        #expect(after == before)
        let statusAfter = try await StatusReport(engine.status())
        #expect(statusAfter.entries == statusBefore.entries)
        #expect(statusAfter.grants == statusBefore.grants)
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == walletBefore.balanceSeconds)
        #expect(await engine.planList().map(\.then) == ["I will read a page"])
        #expect(await engine.alternativeList().map(\.text) == ["stretch for a minute"])
        #expect(try await engine.schedules().map(\.schedule.name) == ["evenings"])
        #expect(await engine.profileList().map(\.name) == ["default", "kids"])
    }

    @Test func an_hour_blocked_earns_five_minutes_within_the_award_instant() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        #expect(await engine.nextDueInstant() == Fixture.noon + .minutes(60))
        time.pass(.minutes(60))
        try await engine.tick()
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 120 + 300)
        #expect(wallet.earnedTodaySeconds == 300)
    }

    @Test(arguments: [false, true])
    func clock_moved_back_across_a_restart_earns_nothing_twice_and_is_recorded(rebooted: Bool) async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon)
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.block(["instagram"])
            time.pass(.minutes(60))
            try await engine.tick()
            #expect(try await WalletReport(engine.wallet()).balanceSeconds == 420)
        }
        // Stopped for a minute, and the system clock set back by an hour meanwhile.
        time.pass(.minutes(1))
        time.setWall(by: .minutes(-60))
        if rebooted { time.reboot(as: "boot-2") }
        let engine = try await Fixture.start(dir, time)
        let now = await engine.trustedNow()
        // Same boot: the boot clock says 61 min passed. New boot: the last trusted instant is the
        // latest time known, whatever the wall says.
        #expect(now == Fixture.noon + .minutes(rebooted ? 60 : 61))
        let tamper = try await engine.events().map(EventReport.init).filter { $0.kind == "tamper" }
        #expect(tamper.count == 1)

        // The next hours repeat wall-clock times already earned: nothing more until local midnight.
        for _ in 0..<3 {
            time.pass(.minutes(60))
            try await engine.tick()
        }
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 420)
        #expect(wallet.earningFrozenUntil == Fixture.noon + .hours(12))
    }

    @Test func clock_moved_back_while_running_is_recorded_and_stops_earning_for_the_day() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        time.pass(.minutes(30))
        time.setWall(by: .hours(-2))
        try await engine.tick()
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "tamper" }.count == 1)
        time.pass(.minutes(90))
        try await engine.tick()
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 120)
        #expect(wallet.earningFrozenUntil == Fixture.noon + .hours(12))
    }

    @Test func clock_moved_forward_while_running_ends_no_cooldown_early() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        time.setWall(by: .minutes(150))
        let r = await refusal { () async throws(EngineError) in try await engine.unblock(["instagram"]) }
        #expect(r?.rule == .cooldown)
        #expect(try await engine.events().map(EventReport.init).contains { $0.kind == "tamper" })
        #expect(await engine.decision("www.instagram.com").blocked)
    }

    @Test func clock_jump_seen_only_by_reading_events_is_already_listed() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        time.setWall(by: .minutes(150))
        // No command and no timer ran since the jump: the read itself must record it.
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "tamper" }.count == 1)
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "tamper" }.count == 1, "recorded once")
    }
}
