import ControlAPI
import Foundation
import ScrollOffCore
import Store
import Testing

extension ControlEndToEnd {
/// SPEC §7: `scrolloff stats --week` and `scrolloff digest` through the real CLI, on a real
/// terminal (util-linux `script` gives it a pty), with and without NO_COLOR, and piped.
@Suite
struct StatsDashboardTests {
    /// Two days of urges for the default profile (UTC), written beside the running helper:
    /// Tuesday 21:05, 21:15 instagram, 22:40 tiktok (a spend follows at 22:41, so not resisted);
    /// Wednesday (today) 08:05, 08:20 instagram, 09:10 reddit.
    static func seed(_ server: EngineServer) throws {
        let store = try Store(directory: server.directory + "/state")
        let tuesday = Instant(secondsSince1970: 1_794_873_600) // 2026-11-17 00:00 UTC
        let wednesday = tuesday + .hours(24)
        var change = StateChange()
        for (t, entry) in [(tuesday + .minutes(21 * 60 + 5), "instagram"), (tuesday + .minutes(21 * 60 + 15), "instagram"),
                           (tuesday + .minutes(22 * 60 + 40), "tiktok"), (wednesday + .minutes(8 * 60 + 5), "instagram"),
                           (wednesday + .minutes(8 * 60 + 20), "instagram"), (wednesday + .minutes(9 * 60 + 10), "reddit")] {
            change.append(.appendEvent(StoredEvent(profile: "default", time: t, kind: .urge, entry: EntryID(entry), clientIP: "127.0.0.1")))
        }
        let spend = tuesday + .minutes(22 * 60 + 41)
        change.append(.saveGrant(profile: "default", Grant(id: 900, entry: "tiktok", kind: .spend, start: spend, end: spend + .minutes(10)),
                                 ended: StateChange.GrantEnd(at: spend + .minutes(10), reason: "stopped")))
        try store.commit(change, anchor: ClockAnchor(trusted: EngineServer.noon, bootNanoseconds: 1, bootID: "seed"))
    }

    func onTerminal(_ server: EngineServer, _ arguments: [String], noColor: Bool) async throws -> ProcessResult {
        let command = ([scrolloffBinary] + arguments + ["--socket", server.socketPath]).joined(separator: " ")
        var environment = ["PATH": "/usr/bin:/bin", "TERM": "xterm", "TZ": "UTC"]
        if noColor { environment["NO_COLOR"] = "1" }
        return try await run("/bin/sh", ["-c", "/usr/bin/script -qfec '\(command)' /dev/null </dev/null"], environment: environment)
    }

    static let expectedLines = [
        "You resisted 5 of 6 urges this week.",
        "2 days in a row on your streak — your longest yet.",
        "▁▁▁▁▁██  5 of 6 resisted (83%)",
        "▁▁▁▁▁▁▁▁█▅▁▁▁▁▁▁▁▁▁▁▁█▅▁  most urges 8–10 h",
        "instagram 4 · reddit 1 · tiktok 1",
        "0     6     12    18   23",
        // Week-over-week and month-over-month: nothing was recorded before, so no percentage.
        "vs last week: urges — · resisted — · protected —",
        "vs last month: urges — · resisted — · protected —",
        // Lifetime: every day the books hold (here the same two days).
        "5 of 6 resisted (83%) · protected ",
    ]

    @Test func week_dashboard_on_a_terminal_has_colour_sparklines_heatmap_and_sentences() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        try Self.seed(server)
        let coloured = try await onTerminal(server, ["stats", "--week"], noColor: false)
        #expect(coloured.status == 0, "\(coloured)")
        #expect(coloured.stdout.contains("\u{1B}["), "a terminal without NO_COLOR gets colour")
        let plain = coloured.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        for line in Self.expectedLines { #expect(plain.contains(line), "\(line) in \(plain)") }

        let noColor = try await onTerminal(server, ["stats", "--week"], noColor: true)
        #expect(noColor.status == 0, "\(noColor)")
        #expect(!noColor.stdout.contains("\u{1B}"), "\(noColor.stdout)")
        for line in Self.expectedLines { #expect(noColor.stdout.contains(line), "\(line) in \(noColor.stdout)") }

        // Piped (not a terminal): the same words, no escapes even without NO_COLOR.
        let piped = try await run(scrolloffBinary, ["stats", "--week", "--socket", server.socketPath], environment: ["PATH": "/usr/bin:/bin", "TZ": "UTC"])
        #expect(piped.status == 0 && !piped.stdout.contains("\u{1B}"))
        for line in Self.expectedLines { #expect(piped.stdout.contains(line)) }
    }

    /// A digest as the helper's Sunday 19:00 timer writes it: the week Monday 11-09 to Sunday 11-15,
    /// 4 urges on Thursday 11-12 (3 resisted) and 2 on Saturday 11-14 (both resisted).
    static func seedDigest(_ server: EngineServer) throws {
        let utc = try #require(LocalCalendar(identifier: "UTC"))
        var thursday = InsightDay(day: LocalCalendar.Day(year: 2026, month: 11, day: 12))
        thursday.urges = 4
        thursday.resisted = 3
        thursday.hourUrges[21] = 4
        thursday.entryUrges = ["instagram": 4]
        thursday.entryResisted = ["instagram": 3]
        var saturday = InsightDay(day: LocalCalendar.Day(year: 2026, month: 11, day: 14))
        saturday.urges = 2
        saturday.resisted = 2
        saturday.hourUrges[22] = 2
        saturday.entryUrges = ["tiktok": 2]
        saturday.entryResisted = ["tiktok": 2]
        let sunday = LocalCalendar.Day(year: 2026, month: 11, day: 15)
        let week = StatsReport(profile: "default", period: .week,
                               insights: Insights(days: [thursday, saturday], today: sunday, periodDays: 7, calendar: utc),
                               calendar: utc, notes: [])
        let store = try Store(directory: server.directory + "/state")
        let written = try store.recordOnce(key: WeeklyDigest.key(weekEnding: sunday),
                                           event: StoredEvent(profile: "default", time: utc.instant(of: sunday, hour: 19), kind: .weeklyDigest,
                                                              payload: String(decoding: ControlJSON.encode(week), as: UTF8.self)))
        #expect(written)
    }

    static let digestLines = [
        "Your week · 2026-11-09 to 2026-11-15",
        "You resisted 5 of 6 urges this week.",
        "▁▁▁█▁▅▁  5 of 6 resisted (83%)",
        "most urges 21–23 h",
        "instagram 4 · tiktok 2",
        "Next digest: Sun 19:00.",
    ]

    @Test func digest_on_a_terminal_shows_last_sundays_week_with_and_without_colour() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        try Self.seedDigest(server)
        let coloured = try await onTerminal(server, ["digest"], noColor: false)
        #expect(coloured.status == 0, "\(coloured)")
        #expect(coloured.stdout.contains("\u{1B}["), "a terminal without NO_COLOR gets colour")
        let plain = coloured.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        for line in Self.digestLines { #expect(plain.contains(line), "\(line) in \(plain)") }

        let noColor = try await onTerminal(server, ["digest"], noColor: true)
        #expect(noColor.status == 0, "\(noColor)")
        #expect(!noColor.stdout.contains("\u{1B}"), "\(noColor.stdout)")
        for line in Self.digestLines { #expect(noColor.stdout.contains(line), "\(line) in \(noColor.stdout)") }

        let json = try await server.json(["digest"])
        let digest = try #require(json["digest"] as? [String: Any])
        #expect(digest["first_day"] as? String == "2026-11-09" && digest["last_day"] as? String == "2026-11-15")
        #expect(digest["urges"] as? Int == 6 && digest["urges_resisted"] as? Int == 5)
        #expect(json["written_at"] as? String == "2026-11-15T19:00:00Z" && json["next_at"] as? String == "2026-11-22T19:00:00Z")
    }

    @Test func stats_json_has_every_figure() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        try Self.seed(server)
        let week = try await server.json(["stats", "--week"])
        #expect(week["urges"] as? Int == 6 && week["urges_resisted"] as? Int == 5 && week["resisted_percent"] as? Int == 83)
        #expect((week["heatmap"] as? [Int])?.count == 24)
        #expect((week["heatmap"] as? [Int])?[8] == 2)
        #expect((week["trend"] as? [[String: Any]])?.count == 7)
        #expect((week["top_entries"] as? [[String: Any]])?.first?["entry"] as? String == "instagram")
        #expect((week["peak_hours"] as? [String: Any])?["start"] as? Int == 8)
        #expect(week["strongest_weekday"] as? String == "Wednesday" && week["toughest_weekday"] as? String == "Tuesday")
        #expect(Set(week.keys).isSuperset(of: ["week_over_week", "month_over_month", "lifetime", "bests", "milestones", "summary",
                                               "exercises", "open_seconds", "peeks", "tokens", "streak_days", "previous"]))
        // The resisted share of every sum, lifetime included; none where there were no urges.
        #expect((week["lifetime"] as? [String: Any])?["resisted_percent"] as? Int == 83)
        #expect((week["lifetime"] as? [String: Any])?["urges"] as? Int == 6)
        #expect((week["previous"] as? [String: Any]).map { $0["resisted_percent"] == nil } == true)
        let year = try await server.json(["stats", "--year"])
        #expect(year["period"] as? String == "year" && (year["trend"] as? [Any])?.count == 365 && year["urges"] as? Int == 6)

        let digest = try await server.cli(["digest"])
        #expect(digest.status == 0 && digest.stdout.contains("No weekly digest yet. The first is written Sun 19:00, on Sunday evening."), "\(digest)")
    }
}
}
