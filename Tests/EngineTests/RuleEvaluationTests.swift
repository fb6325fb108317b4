import Helper
import ScrollOffCore
import Testing

/// The engine evaluates only the entries a profile's rules name (a rule change must not cost a pass over every entry); the
/// answer must be the one a full evaluation of every entry gives.
@Suite("Engine: evaluating only the named entries")
struct RuleEvaluationTests {
    static func rules(strict: Bool) throws -> ProfileRules {
        let t = Fixture.noon
        var schedules = [
            Schedule(name: "evenings", start: try LocalTime.parse("18:00"), end: try LocalTime.parse("22:00"), timeZoneID: "UTC",
                     entries: ["youtube", "news.example.com"], kind: .block, reason: "reading"),
            Schedule(name: "night", start: try LocalTime.parse("23:00"), end: try LocalTime.parse("06:00"), timeZoneID: "UTC",
                     entries: ["tiktok"], kind: .curfew),
        ]
        if strict {
            schedules.append(Schedule(name: "exam", start: try LocalTime.parse("13:00"), end: try LocalTime.parse("14:00"),
                                      timeZoneID: "UTC", entries: [], kind: .strictCurfew))
        }
        return ProfileRules(
            blocks: [Block(entry: "instagram", created: t, cooldownUntil: t + .hours(2), reason: "sleep")],
            schedules: schedules,
            focusSessions: [try FocusSession(id: 1, entries: ["reddit"], startingAt: t, length: .minutes(45))],
            grants: [Grant(id: 1, entry: "instagram", kind: .spend, start: t + .minutes(5), end: t + .minutes(15))])
    }

    @Test(arguments: [false, true], [0, 10, 70, 400, 660, 1_400] as [Int64])
    func named_only_evaluation_equals_evaluating_every_entry(strict: Bool, minutes: Int64) async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["news.example.com"]) // a custom domain in the matcher's entries
        let tables = engine.box.enforcement.tables
        #expect(tables.entries.count > 10)
        let rules = try Self.rules(strict: strict)
        let t = Fixture.noon + .minutes(minutes)
        let fast = tables.evaluate(rules, at: t)
        let full = rules.evaluate(entries: tables.entries, at: t)
        #expect(fast.entries == full.entries)
        #expect(fast.strictCurfewUntil == full.strictCurfewUntil)
        #expect(fast.strictCurfewNextEdge == full.strictCurfewNextEdge)
    }
}
