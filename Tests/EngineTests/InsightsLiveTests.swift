import ControlAPI
@testable import Enforcement
@testable import Engine
import ControlServer
import Foundation
@testable import Helper
import ScrollOffCore
import Store
import Testing

/// SPEC §7 through the engine's own paths rather than seeded rows: blocked queries, peeks, tokens,
/// spends and exercises become the figures `stats` gives, on the profile's local days; and the
/// weekly digest comes at Sunday 19:00 in each profile's own zone.
@Suite("Insights from what the engine records, in the profile's zone")
struct InsightsLiveTests {
    static func start(_ dir: String, _ time: TestTimeSource, zone: String, preset: Preset = .strict) async throws -> HelperEngine {
        let configuration = EngineConfiguration(stateDirectory: dir, catalog: Fixture.catalog, extraAllowedHosts: ["lists.example.org"],
                                                buildDate: Fixture.buildDate, defaultTimeZoneID: zone, defaultPreset: preset)
        return try await HelperEngine.start(configuration: configuration, timeSource: time)
    }

    /// New York (UTC−5 in November). Wednesday 2026-11-18 23:59:30 local a phone asks for instagram
    /// and asks again at 00:00:20: one episode, on Wednesday, in hour 23. A free peek at 00:02
    /// follows it within 5 minutes, so it was not resisted. Thursday also holds a completed exercise,
    /// a token (10 min) and a spend stopped after 90 s.
    @Test func an_episode_across_midnight_counts_once_on_its_first_day_and_each_bypass_on_its_own() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ny = try #require(LocalCalendar(identifier: "America/New_York"))
        let wednesday = LocalCalendar.Day(year: 2026, month: 11, day: 18), thursday = LocalCalendar.Day(year: 2026, month: 11, day: 19)
        let time = TestTimeSource(wall: Fixture.noon) // 07:00 local
        let engine = try await Self.start(dir, time, zone: "America/New_York", preset: .flexible)
        _ = try await engine.block(["instagram", "tiktok"])
        try await engine.tick()

        func at(_ day: LocalCalendar.Day, _ h: Int, _ m: Int, _ s: Int = 0) -> Instant {
            ny.instant(of: day, hour: h) + .minutes(Int64(m)) + .seconds(Int64(s))
        }
        func move(to t: Instant) async throws {
            time.pass(t - (await engine.trustedNow()))
            try await engine.tick()
        }
        func query(_ name: String) async {
            let d = await engine.decision(name, client: "192.168.1.20")
            #expect(d.blocked && d.managed, "\(name) should be blocked")
            engine.recordUrge(d, enforcement: engine.box.enforcement, client: ClientIP("192.168.1.20") ?? .unknown, now: await engine.trustedNow())
        }

        try await move(to: at(wednesday, 23, 59, 30))
        await query("www.instagram.com")
        try await move(to: at(thursday, 0, 0, 20))
        await query("instagram.com")
        try await move(to: at(thursday, 0, 2))
        _ = try await engine.peek("instagram")
        try await move(to: at(thursday, 0, 10))
        try await engine.recordExercise("breath", entry: "tiktok", outcome: .completed)
        try await move(to: at(thursday, 0, 11))
        _ = try await engine.token("tiktok")
        try await move(to: at(thursday, 1, 0))
        _ = try await engine.use("instagram", for: .minutes(5))
        try await move(to: at(thursday, 1, 1, 30))
        _ = try await engine.stop()
        try await move(to: at(thursday, 1, 5))

        let day = try await engine.stats(.day)
        #expect(day.firstDay == "2026-11-19" && day.lastDay == "2026-11-19")
        // The episode started on Wednesday: Thursday has no urge of its own.
        #expect(day.urges == 0 && day.urgesResisted == 0)
        #expect(day.peeks == 1 && day.tokens == 1 && day.exercises == 1)
        // Peek 60 s, token 600 s, spend 90 s; only the spend cost credit (the first peek is free).
        #expect(day.openSeconds == 60 + 600 + 90)
        #expect(day.spentSeconds == 90)
        // Thursday's token breaks the streak, but today is not over: Wednesday alone counts.
        #expect(day.streakDays == 1 && day.streakStart == "2026-11-18")

        let week = try await engine.stats(.week)
        #expect(week.urges == 1 && week.urgesResisted == 0 && week.resistedPercent == 0)
        #expect(week.trend.suffix(2).map(\.urges) == [1, 0] && week.trend.suffix(2).map(\.day) == ["2026-11-18", "2026-11-19"])
        // Local hour 23, not UTC's 04.
        #expect(week.heatmap[23] == 1 && week.heatmap.reduce(0, +) == 1)
        #expect(week.topEntries == [EntryFigures(entry: "instagram", urges: 1, resisted: 0)])
        // No weekday is called strong when nothing was resisted on it; the toughest is named.
        #expect(week.strongestWeekday == nil && week.toughestWeekday == "Wednesday")
        #expect(week.lifetime.peeks == 1 && week.lifetime.tokens == 1 && week.lifetime.exercises == 1 && week.lifetime.openSeconds == 750)
        // Nothing resisted is said kindly, with what helps, never as "0 of 1".
        #expect(week.summary.first == "You noticed 1 urge this week — each one is a chance to try your plan.")
    }

    /// Tokyo (UTC+9) and Los Angeles (UTC−8 in November) profiles on one helper: each gets its week
    /// at its own Sunday 19:00, which is 10:00 UTC on Sunday and 03:00 UTC on Monday.
    @Test func each_profile_gets_its_digest_at_sunday_19_00_in_its_own_zone() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon) // Wednesday 2026-11-18 12:00 UTC: 21:00 in Tokyo, 04:00 in Los Angeles
        let engine = try await Self.start(dir, time, zone: "Asia/Tokyo")
        try await engine.applyConfiguredProfiles(default: ProfileSettings(name: "default", timeZoneID: "Asia/Tokyo", preset: .strict),
                                                 profiles: [ProfileSettings(name: "west", clientCIDRs: ["10.9.0.0/24"], timeZoneID: "America/Los_Angeles",
                                                                            preset: .strict)])
        _ = try await engine.block(["instagram"])
        _ = try await engine.block(["instagram"], profile: "west")
        try await engine.tick()

        let tokyoDigest = Instant(secondsSince1970: 1_795_341_600) // Sun 2026-11-22 10:00 UTC
        let westDigest = Instant(secondsSince1970: 1_795_402_800) // Mon 2026-11-23 03:00 UTC
        #expect(try await engine.digest().nextAt == tokyoDigest)
        #expect(try await engine.digest(profile: "west").nextAt == westDigest)
        func move(to t: Instant) async throws {
            time.pass(t - (await engine.trustedNow()))
            try await engine.tick()
        }

        try await move(to: tokyoDigest - .minutes(1))
        #expect(try await engine.digest().digest == nil)
        #expect(try await engine.digest(profile: "west").digest == nil)
        // The timer wakes at the moment itself, not at its next 10-minute look.
        #expect(try #require(await engine.nextDueInstant()) <= tokyoDigest)
        try await move(to: tokyoDigest)
        let tokyo = try #require(try await engine.digest().digest)
        #expect(tokyo.firstDay == "2026-11-16" && tokyo.lastDay == "2026-11-22")
        // Blocked from Wednesday 21:00 to Sunday 19:00 Tokyo time: 94 h.
        #expect(tokyo.protectedSeconds == 94 * 3600)
        #expect(try await engine.digest().writtenAt == tokyoDigest)
        #expect(try await engine.digest(profile: "west").digest == nil)

        try await move(to: westDigest - .minutes(1))
        #expect(try await engine.digest(profile: "west").digest == nil)
        #expect(try #require(await engine.nextDueInstant()) <= westDigest)
        try await move(to: westDigest)
        let west = try #require(try await engine.digest(profile: "west").digest)
        #expect(west.firstDay == "2026-11-16" && west.lastDay == "2026-11-22" && west.profile == "west")
        // Blocked from Wednesday 04:00 to Sunday 19:00 Los Angeles time: 20 h + 3 × 24 h + 19 h = 111 h,
        // each day cut at the west's own midnights.
        #expect(west.protectedSeconds == 111 * 3600)
        #expect(west.trend.map(\.protectedSeconds) == [0, 0, 20 * 3600, 86_400, 86_400, 86_400, 19 * 3600])
        #expect(tokyo.trend.map(\.protectedSeconds) == [0, 0, 3 * 3600, 86_400, 86_400, 86_400, 19 * 3600])
        #expect(try await engine.events(profile: "west").map(EventReport.init).filter { $0.kind == EventKind.weeklyDigest.rawValue }.count == 1)
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == EventKind.weeklyDigest.rawValue }.count == 1)
    }
}
