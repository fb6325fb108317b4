import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// Plans, alternatives, stats, events and export through the real CLI, and the `--json` names
/// SPEC §13 says scripts rely on.
@Suite
struct InsightVerbTests {
    @Test func json_fields_of_spec_13_for_status_wallet_stats_and_plan_list() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        _ = try await server.cli(["plan", "add", "--when", "I feel bored", "--then", "I will stretch"])

        let status = try await server.json(["status"])
        #expect(Set(status.keys).isSuperset(of: ["entries", "peeks_left_today", "tokens_left_month"]))
        let entry = try #require((status["entries"] as? [[String: Any]])?.first)
        #expect(Set(entry.keys).isSuperset(of: ["id", "state", "locked_until"]))

        let wallet = try await server.json(["wallet"])
        #expect(Set(wallet.keys).isSuperset(of: ["balance_seconds", "earned_today_seconds", "spent_today_seconds"]))

        for period in ["--day", "--week", "--month"] {
            let stats = try await server.json(["stats", period])
            #expect(Set(stats.keys).isSuperset(of: ["urges", "urges_resisted", "protected_seconds", "spent_seconds", "earned_seconds", "streak_days"]))
            #expect(stats["period"] as? String == String(period.dropFirst(2)))
        }

        let plans = try await server.json(["plan", "list"])
        let plan = try #require((plans["plans"] as? [[String: Any]])?.first)
        #expect(Set(plan.keys).isSuperset(of: ["id", "when", "then"]))
    }

    @Test func plans_are_added_listed_shown_at_a_peek_and_archived() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        let added = try await server.cli(["plan", "add", "--when", "I feel bored", "--then", "I will take a short walk"])
        #expect(added.status == 0, "\(added)")
        let id = try #require((try await server.json(["plan", "list"])["plans"] as? [[String: Any]])?.first?["id"] as? Int)

        let alternative = try await server.cli(["alternatives", "add", "text", "a", "friend"])
        #expect(alternative.status == 0, "\(alternative)")
        let alternatives = try await server.cli(["alternatives", "list"])
        #expect(alternatives.stdout.contains("• text a friend"))

        // SPEC §8: the plan comes first, before what opened.
        let peek = try await server.cli(["peek", "instagram"])
        #expect(peek.status == 0, "\(peek)")
        let planLine = try #require(peek.stdout.range(of: "Your plan: when I feel bored, I will take a short walk."))
        let openLine = try #require(peek.stdout.range(of: "instagram is open until"))
        #expect(planLine.lowerBound < openLine.lowerBound)
        #expect(peek.stdout.contains("Instead, you could: text a friend"))
        let shown = try await server.json(["plan", "list"])
        #expect((shown["plans"] as? [[String: Any]])?.first?["shown_count"] as? Int == 1)

        let archived = try await server.cli(["plan", "archive", "\(id)"])
        #expect(archived.status == 0, "\(archived)")
        #expect((try await server.json(["plan", "list"])["plans"] as? [Any])?.isEmpty == true)
        let all = try await server.json(["plan", "list", "--all"])
        #expect((all["plans"] as? [[String: Any]])?.first?["archived"] as? Bool == true)

        let missing = try await server.cli(["plan", "archive", "999"])
        #expect(missing.status == 2, "an unknown id is a usage error: \(missing)")
        let empty = try await server.cli(["plan", "add", "--when", " ", "--then", "walk"])
        #expect(empty.status == 2, "\(empty)")
    }

    @Test func export_csv_writes_rows_that_parse() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        _ = try await server.cli(["use", "instagram", "--for", "1m"])
        server.time.shift(.seconds(20))
        _ = try await server.cli(["stop"])

        let export = try await server.cli(["export", "--csv"])
        #expect(export.status == 0, "\(export)")
        let rows = CSV.rows(export.stdout)
        let header = try #require(rows.first)
        #expect(header == ["record", "id", "time_utc", "time_ms", "profile", "reason_or_kind", "delta_seconds", "entry", "client_ip", "text"])
        #expect(rows.count > 3, "\(export.stdout)")
        #expect(rows.allSatisfy { $0.count == header.count }, "every row has the header's \(header.count) fields")
        let all = rows.flatMap { $0 }
        #expect(all.contains("starter"))
        #expect(all.contains("spend"))
    }

    @Test func events_since_a_day_and_stats_show_the_day() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        _ = try await server.cli(["unblock", "instagram"])
        let events = try await server.cli(["events", "--since", "2026-11-18"])
        #expect(events.status == 0, "\(events)")
        #expect(!events.stdout.isEmpty)
        let later = try await server.json(["events", "--since", "2026-11-19"])
        #expect((later["events"] as? [Any])?.isEmpty == true)
        let bad = try await server.cli(["events", "--since", "yesterday-ish"])
        #expect(bad.status == 2)
        let stats = try await server.cli(["stats"])
        #expect(stats.status == 0, "\(stats)")
        #expect(stats.stdout.contains("2026-11-18"))
    }
}
}

/// RFC 4180 CSV: fields in double quotes may hold commas, newlines and doubled quotes.
enum CSV {
    static func rows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text)[...]
        while let c = characters.popFirst() {
            if quoted {
                if c == "\"" {
                    if characters.first == "\"" { field.append("\""); characters.removeFirst() } else { quoted = false }
                } else { field.append(c) }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(field); field = ""
            } else if c == "\n" || c == "\r\n" {
                row.append(field); rows.append(row); row = []; field = ""
            } else if c != "\r" {
                field.append(c)
            }
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }
}
