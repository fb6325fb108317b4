import Foundation
import Testing

/// SPEC §3 with the real binaries: a list under a block's cooldown does not shrink by a refresh,
/// not even across a kill -9, and two curfews that join into more than 16 h are refused.
@Suite struct RuleHoldEndToEndTests {
    /// Writes the list and dates it `ahead` seconds from now, so a refresh sees a new copy.
    static func writeList(_ path: String, _ names: [String], ahead: TimeInterval) throws {
        try (names.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(ahead)], ofItemAtPath: path)
    }

    /// The A answer, asked until it is `expected` or 5 s have passed.
    static func answer(_ helper: RestartableHelper, _ name: String, becomes expected: String) throws -> String {
        var last = ""
        for _ in 0..<50 {
            last = (try? shortA(helper.port, name)) ?? ""
            if last == expected { return last }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return last
    }

    @Test func names_a_refresh_drops_under_a_cooldown_stay_blocked_across_a_sigkill() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        // dnsmasq answers every name under fwd.test with 10.1.2.3, so an open name is plain to see.
        let list = "\(scratch.path)/doom.txt"
        try Self.writeList(list, (0..<50).map { "doom\($0).fwd.test" }, ahead: 0)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }
        let added = try helper.cli(["lists", "add", "file://" + list, "--name", "doom"])
        #expect(added.exitCode == 0, "\(added)")
        #expect(try helper.cli(["block", "doom", "--reason", "sleep first"]).exitCode == 0)
        #expect(try Self.answer(helper, "doom7.fwd.test", becomes: "0.0.0.0") == "0.0.0.0")

        try Self.writeList(list, ["doom0.fwd.test"], ahead: 10)
        let update = try helper.cli(["lists", "update", "doom"])
        #expect(update.exitCode == 0, "\(update)")
        #expect(update.output.contains("updated, 1 name"), "\(update)")
        #expect(update.output.contains("49 names dropped by a refresh stay blocked until"), "\(update)")
        #expect(try shortA(helper.port, "doom7.fwd.test") == "0.0.0.0", "held by the cooldown")

        try helper.restart(signal: SIGKILL)
        #expect(try Self.answer(helper, "doom7.fwd.test", becomes: "0.0.0.0") == "0.0.0.0", "a kill -9 opens nothing")
        #expect(try shortA(helper.port, "doom0.fwd.test") == "0.0.0.0")
        let listed = try jsonObject(try helper.cli(["lists", "list", "--json"]).output)
        let held = (listed["lists"] as? [[String: Any]])?.first?["held"] as? [String: Any]
        #expect(held?["count"] as? Int == 49, "\(listed)")
    }

    @Test func two_curfews_that_join_into_24_hours_are_refused_naming_both() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }
        let day = try helper.cli(["schedule", "add", "day", "--from", "00:00", "--to", "16:00", "--curfew", "--entries", "instagram"])
        #expect(day.exitCode == 0, "\(day)")
        let evening = try helper.cli(["schedule", "add", "evening", "--from", "16:00", "--to", "00:00", "--curfew", "--entries", "instagram"])
        #expect(evening.exitCode == 1, "\(evening)")
        #expect(evening.output.contains("The curfews “day” and “evening” touch or overlap"), "\(evening)")
        #expect(evening.output.contains("instagram in curfew round the clock"), "\(evening)")
        #expect(evening.output.contains("Leave a gap between them"), "\(evening)")

        // A gap of a minute each side keeps each run at 16 h or less: accepted.
        let gap = try helper.cli(["schedule", "add", "evening", "--from", "16:01", "--to", "23:59", "--curfew", "--entries", "instagram"])
        #expect(gap.exitCode == 0, "\(gap)")
        let list = try jsonObject(try helper.cli(["schedule", "list", "--json"]).output)
        #expect((list["schedules"] as? [[String: Any]])?.compactMap { $0["name"] as? String }.sorted() == ["day", "evening"])
    }
}
