import Testing
import ScrollOffCore

/// `status` tells the truth (SPEC §3): the next instant the state really changes, what it changes
/// to, and the reasons of every rule in force.
@Suite struct RulesStatusTruthTests {
    static let zone = "Europe/Berlin"
    static func at(_ text: String) -> Instant { RulesTime.local(text, zone) }
    static func block(_ entry: EntryID, _ reason: String?) -> Block {
        Block(entry: entry, created: at("2026-11-01 00:00"), cooldownUntil: at("2026-11-01 02:00"), reason: reason)
    }

    @Test func all_day_block_plus_weeknight_schedule_never_changes() {
        // Was "changes at 2026-12-21 22:30 — 27 d": the 32nd edge that changes nothing.
        let rules = ProfileRules(blocks: [Self.block("youtube", "finish the thesis")],
                                 schedules: [RulesTime.schedule("22:30", "06:30", days: .weekdays, entries: ["youtube"])])
        let s = rules.status(of: "youtube", at: Self.at("2026-11-24 12:00"))
        #expect(s.state == .blocked && s.nextChange == nil && s.nextState == nil)
        #expect(s.reason == "finish the thesis")
    }

    @Test func curfew_under_an_all_day_block_changes_to_blocked_and_keeps_both_reasons() {
        // Was "curfew · changes at 07:00" with the block's reason lost.
        let rules = ProfileRules(blocks: [Self.block("instagram", "less scrolling")],
                                 schedules: [RulesTime.schedule("23:00", "07:00", entries: ["instagram"], kind: .curfew, reason: "sleep")])
        let s = rules.status(of: "instagram", at: Self.at("2026-11-24 01:00"))
        #expect(s.state == .curfew)
        #expect(s.nextChange == Self.at("2026-11-24 07:00") && s.nextState == .blocked)
        #expect(s.reasons == ["sleep", "less scrolling"] && s.reason == "sleep")
        // A curfew with no words of its own shows the block's.
        var quiet = rules
        quiet.schedules[0].reason = nil
        #expect(quiet.status(of: "instagram", at: Self.at("2026-11-24 01:00")).reason == "less scrolling")
        // After 07:00: blocked for good, with the block's reason.
        let morning = rules.status(of: "instagram", at: Self.at("2026-11-24 08:00"))
        #expect(morning.state == .blocked && morning.reasons == ["less scrolling"])
        #expect(morning.nextChange == Self.at("2026-11-24 23:00") && morning.nextState == .curfew)
    }

    @Test func grants_back_to_back_read_as_one_open_stretch() {
        let rules = ProfileRules(blocks: [Self.block("reddit", nil)], grants: [
            Grant(id: 1, entry: "reddit", kind: .peek, start: Self.at("2026-11-24 12:00"), end: Self.at("2026-11-24 12:01")),
            Grant(id: 2, entry: "reddit", kind: .spend, start: Self.at("2026-11-24 12:01"), end: Self.at("2026-11-24 12:10")),
        ])
        let s = rules.status(of: "reddit", at: Self.at("2026-11-24 12:00"))
        #expect(s.state == .open(until: Self.at("2026-11-24 12:10")) && s.nextState == .blocked)
    }

    @Test func running_focus_session_gives_its_end_and_reason() throws {
        let start = Self.at("2026-11-24 09:00")
        let focus = try FocusSession(id: 1, entries: ["tiktok"], startingAt: start, length: .minutes(45), reason: "deep work")
        let s = ProfileRules(focusSessions: [focus]).status(of: "tiktok", at: start + .minutes(5))
        #expect(s.state == .blocked && s.nextChange == start + .minutes(45) && s.reason == "deep work")
    }
}
