import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// `status` tells the truth (SPEC §3), through the real CLI and control server over the real
/// engine at Wednesday 2026-11-18 12:00 UTC: the next change skips edges that change nothing, says
/// what the state becomes, keeps every reason, and lists running focus sessions and grants.
@Suite
struct StatusTruthVerbTests {
    static func entry(_ status: [String: Any], _ id: String) throws -> [String: Any] {
        try #require((status["entries"] as? [[String: Any]])?.first { $0["id"] as? String == id }, "\(status)")
    }

    @Test func all_day_block_plus_weeknight_schedule_shows_no_change() async throws {
        // Was "changes at 2026-12-21 22:30 — 27 d": an edge that changes nothing.
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        #expect(try await server.cli(["block", "youtube", "--reason", "thesis first"]).status == 0)
        let added = try await server.cli(["schedule", "add", "weeknights", "--from", "22:30", "--to", "06:30", "--days", "weekdays",
                                          "--entries", "youtube"])
        #expect(added.status == 0, "\(added)")
        let youtube = try Self.entry(try await server.json(["status"]), "youtube")
        #expect(youtube["state"] as? String == "blocked")
        #expect(youtube["next_change"] is NSNull, "\(youtube)")
        #expect(youtube["reasons"] as? [String] == ["thesis first"])
        let text = try await server.cli(["status"])
        let line = try #require(text.stdout.split(separator: "\n").first { $0.contains("youtube") }, "\(text)")
        #expect(!line.contains("changes at") && !line.contains("then "), "\(line)")
    }

    @Test func curfew_over_an_all_day_block_says_it_becomes_blocked_and_keeps_both_reasons() async throws {
        // Was "curfew · changes at 07:00" with the block's reason lost.
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        #expect(try await server.cli(["block", "instagram", "--reason", "less scrolling"]).status == 0)
        let added = try await server.cli(["schedule", "add", "lunch", "--from", "11:00", "--to", "14:00", "--curfew",
                                          "--entries", "instagram", "--reason", "eat with people"])
        #expect(added.status == 0, "\(added)")
        let instagram = try Self.entry(try await server.json(["status"]), "instagram")
        #expect(instagram["state"] as? String == "curfew")
        #expect(instagram["next_change"] as? String == "2026-11-18T14:00:00Z", "\(instagram)")
        #expect(instagram["next_state"] as? String == "blocked")
        #expect(instagram["reason"] as? String == "eat with people")
        #expect(instagram["reasons"] as? [String] == ["eat with people", "less scrolling"])
        let text = try await server.cli(["status"])
        let line = try #require(text.stdout.split(separator: "\n").first { $0.contains("instagram") }, "\(text)")
        #expect(line.contains("then blocked at 14:00") && line.contains("“eat with people”") && line.contains("“less scrolling”"), "\(line)")
    }

    @Test func running_focus_session_and_grant_show_with_their_ends() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let focus = try await server.cli(["focus", "45m", "--entries", "tiktok"])
        #expect(focus.status == 0, "\(focus)")
        #expect(try await server.cli(["block", "reddit"]).status == 0)
        #expect(try await server.cli(["use", "reddit", "--for", "10m"]).status == 0, "use reddit")
        let status = try await server.json(["status"])
        let sessions = try #require(status["focus"] as? [[String: Any]], "\(status)")
        #expect(sessions.count == 1 && sessions.first?["entries"] as? [String] == ["tiktok"])
        let end = try #require(sessions.first?["end"] as? String)
        #expect(end.hasPrefix("2026-11-18T12:45:0"), "\(end)")
        let reddit = try Self.entry(status, "reddit")
        #expect(reddit["state"] as? String == "open" && reddit["next_state"] as? String == "blocked", "\(reddit)")
        let text = try await server.cli(["status"])
        #expect(text.stdout.contains("Focus: tiktok blocked until 12:45"), "\(text)")
        // The 2 min of starter credit end the spend before its 10 min.
        #expect(text.stdout.contains("Open now: reddit (spend) until 12:02"), "\(text)")
        #expect(text.stdout.contains("tiktok · blocked · opens at 12:45"), "\(text)")
    }
}
}
