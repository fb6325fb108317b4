import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// SPEC §12 through the real CLI and control socket: rule changes with who made them, a refused
/// peek naming its curfew, `export --json` rows and `export --csv` read by Python's csv module,
/// and the plan that fits the moment.
@Suite
struct EventLogVerbTests {
    /// The uid these tests run as, as `events` names it.
    static var me: String {
        let uid = getuid()
        return uid == 0 ? "root (uid 0)" : "uid \(uid)"
    }

    @Test func a_rule_change_and_a_peek_refused_by_a_curfew_show_in_events_with_who_and_until_when() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let added = try await server.cli(["schedule", "add", "homework", "--from", "11:00", "--to", "14:00", "--curfew", "--entries", "instagram"])
        #expect(added.status == 0, "\(added)")
        let peek = try await server.cli(["peek", "instagram"])
        #expect(peek.status == 1, "\(peek)")

        let json = try await server.json(["events"])
        let events = try #require(json["events"] as? [[String: Any]])
        let change = try #require(events.compactMap { $0["rule_change"] as? [String: Any] }.first)
        #expect(change["change"] as? String == "scheduleAdded")
        #expect(change["actor"] as? String == Self.me || (change["actor"] as? String)?.hasSuffix("(uid \(getuid()))") == true)
        #expect(change["rule"] as? String == "curfew “homework” 11:00–14:00 daily for instagram")
        let refusal = try #require(events.compactMap { $0["refusal"] as? [String: Any] }.first)
        #expect(refusal["rule"] as? String == "curfew")
        #expect(refusal["curfew"] as? String == "homework")
        #expect(refusal["opens_at"] as? String == "2026-11-18T14:00:00Z")
        #expect(refusal["action"] as? String == "peek")
        #expect(refusal["count"] as? Int == 1)
        // Exactly the refusal the person saw.
        let message = try #require(refusal["message"] as? String)
        #expect((peek.stdout + peek.stderr).contains(message), "\(peek)")

        let text = try await server.cli(["events"])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("1 rule change; the rules held 1 time (1 peek)."), "\(text.stdout)")
        #expect(text.stdout.contains("peek instagram held by the curfew “homework” until 14:00"), "\(text.stdout)")
        #expect(text.stdout.contains("scheduleAdded  Added curfew “homework” 11:00–14:00 daily for instagram — by "), "\(text.stdout)")
    }

    @Test func export_json_rows_round_trip_the_csv_rows_as_python_reads_them() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        // Commas, quotes, semicolons and non-ASCII; line breaks and tabs are refused at the boundary.
        let tricky = "chores, \"all\" done; and the bins, too; naïve ☕ ‘yes’"
        let adjust = try await server.cli(["adjust", "+5m", "--note", tricky])
        #expect(adjust.status == 0, "\(adjust)")
        #expect(try await server.cli(["adjust", "+5m", "--note", "two\nlines"]).status != 0)
        _ = try await server.cli(["block", "instagram", "--reason", "exams, \"finals\" week"])
        _ = try await server.cli(["unblock", "instagram"]) // refused: cooldown

        let csv = try await server.cli(["export", "--csv"])
        #expect(csv.status == 0, "\(csv)")
        let path = NSTemporaryDirectory() + "/export-\(UUID().uuidString).csv"
        try csv.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // An independent parser: Python's csv module, strict.
        let python = try await run("/usr/bin/python3", ["-c", """
            import csv, json, sys
            with open(sys.argv[1], newline='', encoding='utf-8') as f:
                print(json.dumps(list(csv.reader(f, strict=True))))
            """, path])
        #expect(python.status == 0, "\(python)")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(python.stdout.utf8)) as? [[String]])
        let header = try #require(parsed.first)
        #expect(header == ["record", "id", "time_utc", "time_ms", "profile", "reason_or_kind", "delta_seconds", "entry", "client_ip", "text"])
        let csvRows = Array(parsed.dropFirst())
        #expect(csvRows.contains { $0[0] == "ledger" && $0[5] == "adjust" && $0[9] == tricky }, "\(csvRows)")

        let exported = try await server.cli(["export", "--json"])
        #expect(exported.status == 0, "\(exported)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) as? [String: Any])
        #expect(object["format"] as? String == "json")
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.count == csvRows.count)
        for (row, line) in zip(rows, csvRows) {
            #expect(row["record"] as? String == line[0])
            #expect((row["id"] as? Int).map(String.init) == line[1])
            #expect(row["time"] as? String == line[2])
            #expect((row["time_ms"] as? Int).map(String.init) == line[3])
            #expect((row["profile"] as? String ?? "") == line[4])
            #expect(((row["reason"] ?? row["kind"]) as? String) == line[5])
            #expect(((row["delta_seconds"] as? Int).map(String.init) ?? "") == line[6])
            #expect((row["entry"] as? String ?? "") == line[7])
            #expect((row["client_ip"] as? String ?? "") == line[8])
            #expect((row["text"] as? String ?? "") == line[9])
        }
        // Payloads are JSON objects, not strings: the refused unblock's rule and the block's change.
        let refused = try #require(rows.first { $0["kind"] as? String == "editRefused" })
        #expect((refused["payload"] as? [String: Any])?["rule"] as? String == "cooldown")
        let block = try #require(rows.first { $0["kind"] as? String == "ruleChange" })
        #expect((block["payload"] as? [String: Any])?["change"] as? String == "block")
        #expect(((block["payload"] as? [String: Any])?["rule"] as? String)?.contains("exams, \"finals\" week") == true)

        let both = try await server.cli(["export", "--csv", "--json"])
        #expect(both.status == 2, "\(both)")
    }

    @Test func at_2200_a_peek_shows_the_night_plan_and_counts_it_once() async throws {
        let server = try await EngineServer(startingAt: EngineServer.noon + .hours(10))
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        _ = try await server.cli(["plan", "add", "--when", "I can't sleep at night", "--then", "I will read a paper book"])
        _ = try await server.cli(["plan", "add", "--when", "I wake up in the morning", "--then", "I will open the curtains"])
        let peek = try await server.cli(["peek", "instagram"])
        #expect(peek.status == 0, "\(peek)")
        #expect(peek.stdout.contains("Your plan: when I can't sleep at night, I will read a paper book."), "\(peek)")
        let plans = try #require(try await server.json(["plan", "list"])["plans"] as? [[String: Any]])
        let night = try #require(plans.first { $0["when"] as? String == "I can't sleep at night" })
        #expect(night["shown_count"] as? Int == 1)
        #expect(night["times_referenced"] as? Int == 1)
        #expect(plans.first { $0["when"] as? String == "I wake up in the morning" }?["shown_count"] as? Int == 0)
    }
}
}
