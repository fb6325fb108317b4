import ControlAPI
import ControlServer
import Enforcement
import Helper
import ScrollOffCore
import Testing

@Suite("Engine: urges, reminders and the timer loop")
struct EngineTimerTests {
    @Test func three_blocked_queries_within_60_s_are_one_urge() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        for seconds in [0, 20, 59] as [Int64] {
            let now = Fixture.noon + .seconds(seconds)
            let d = await engine.decision("www.instagram.com", client: "192.168.1.20")
            #expect(d.blocked && d.managed)
            engine.recordUrge(d, enforcement: engine.box.enforcement, client: ClientIP("192.168.1.20") ?? .unknown, now: now)
        }
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }.count == 1)

        // Another client is its own episode; the first client after 60 s starts a new one.
        let d = await engine.decision("www.instagram.com", client: "192.168.1.21")
        engine.recordUrge(d, enforcement: engine.box.enforcement, client: ClientIP("192.168.1.21") ?? .unknown, now: Fixture.noon + .seconds(30))
        engine.recordUrge(d, enforcement: engine.box.enforcement, client: ClientIP("192.168.1.20") ?? .unknown, now: Fixture.noon + .seconds(61))
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.count == 3)
        #expect(urges.allSatisfy { $0.entry == "instagram" })

        time.pass(.minutes(10))
        let stats = try await engine.stats(.day)
        #expect(stats.urges == 3)
        #expect(stats.urgesResisted == 3)
        #expect(stats.protectedSeconds == 600)
    }

    @Test func an_urge_followed_by_a_spend_within_5_minutes_is_not_resisted() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        let d = await engine.decision("www.instagram.com")
        engine.recordUrge(d, enforcement: engine.box.enforcement, client: .v4(0x7F00_0001), now: Fixture.noon)
        time.pass(.minutes(2))
        _ = try await engine.use("instagram", for: .seconds(30))
        let stats = try await engine.stats(.week)
        #expect(stats.urges == 1)
        #expect(stats.urgesResisted == 0)
    }

    @Test func curfew_reminder_is_emitted_ten_minutes_before_with_the_entry_count() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.addSchedule(ScheduleRequest(name: "night", from: "22:00", to: "06:00", curfew: true,
                                                         entries: ["instagram", "tiktok", "reddit", "youtube"]))
        #expect(await engine.nextDueInstant() == Fixture.noon + .minutes(9 * 60 + 50))
        time.pass(.minutes(9 * 60 + 50))
        try await engine.tick()
        let reminders = try await engine.events().map(EventReport.init).filter { $0.kind == "curfewReminder" }
        #expect(reminders.count == 1)
        #expect(reminders.first?.message?.contains("4 entries") == true)
        try await engine.tick()
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "curfewReminder" }.count == 1)
    }

    @Test func timer_loop_ends_a_spend_at_zero_balance_and_publishes_the_block() async throws {
        let time = TestTimeSource(wall: Fixture.noon, followsRealTime: true)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        let loop = Task { try await engine.run() }
        defer { loop.cancel() }
        _ = try await engine.block(["instagram"])
        _ = try await engine.use("instagram") // 120 s of starter credit
        #expect(await engine.decision("www.instagram.com").blocked == false)
        // 118.5 s pass in a moment; the last 1.5 s pass for real while the loop sleeps.
        time.pass(Span(milliseconds: 118_500))
        await engine.wake()
        var blocked = false
        for _ in 0..<100 where !blocked {
            try await Task.sleep(for: .milliseconds(50))
            let now = await engine.trustedNow()
            let e = engine.box.enforcement
            let wire = Fixture.wire("www.instagram.com")
            blocked = wire.withUnsafeBytes { e.decide(wire: $0, client: .unknown, now: now).blocked }
        }
        #expect(blocked)
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 0)
        #expect(wallet.grants.isEmpty)
        // DNS blocks from the snapshot's timeline at the grant's end; the timer writes the books
        // a moment later.
        var ended = false
        for _ in 0..<100 where !ended {
            ended = try await engine.events().map(EventReport.init).contains { $0.kind == "grantEnded" }
            if !ended { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(ended)
        #expect(try await engine.ledgerProblems().isEmpty) // balance == sum of the ledger
    }

    @Test func urges_wait_for_one_batch_that_the_timer_writes_a_quarter_second_later() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram", "tiktok"])
        for (i, name) in ["www.instagram.com", "www.tiktok.com"].enumerated() {
            let d = await engine.decision(name)
            engine.recordUrge(d, enforcement: engine.box.enforcement, client: .v4(0x0A00_0001), now: Fixture.noon + .seconds(Int64(i)))
        }
        // `UrgeRecorder.flushDelay` after the first urge of the batch.
        #expect(await engine.nextDueInstant() == Fixture.noon + Span(milliseconds: 250))
        time.pass(Span(milliseconds: 250))
        try await engine.tick()
        #expect(await engine.nextDueInstant() == Fixture.noon + .minutes(60)) // the next award
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.compactMap(\.entry).sorted() == ["instagram", "tiktok"])
    }

    @Test func a_command_wakes_the_sleeping_timer_so_a_short_spend_ends_on_time() async throws {
        let time = TestTimeSource(wall: Fixture.noon, followsRealTime: true)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        let loop = Task { try await engine.run() }
        defer { loop.cancel() }
        try await Task.sleep(for: .milliseconds(100)) // the loop is asleep until the next award, an hour away
        _ = try await engine.use("instagram", for: .seconds(1))
        var blocked = false
        for _ in 0..<60 where !blocked {
            try await Task.sleep(for: .milliseconds(50))
            let e = engine.box.enforcement
            let now = await engine.trustedNow()
            blocked = Fixture.wire("www.instagram.com").withUnsafeBytes { e.decide(wire: $0, client: .unknown, now: now).blocked }
        }
        #expect(blocked)
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 119)
    }
}
