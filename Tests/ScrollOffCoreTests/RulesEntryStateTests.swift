import Testing
import ScrollOffCore

/// Entry state at an instant and its next change (SPEC §2, §9 TTL input).
@Suite struct RulesEntryStateTests {
    static let zone = "Europe/Berlin"
    static func at(_ text: String) -> Instant { RulesTime.local(text, zone) }
    static let monday = "2026-11-23"

    static func grant(_ entry: EntryID, from: String, minutes: Int64, kind: Grant.Kind = .spend) -> Grant {
        let start = at(from)
        return Grant(id: 1, entry: entry, kind: kind, start: start, end: start + .minutes(minutes))
    }

    @Test func entry_without_rules_is_none_and_never_changes() {
        let s = ProfileRules().status(of: "instagram", at: Self.at("2026-11-23 12:00"))
        #expect(s.state == .none && s.nextChange == nil && !s.state.isManaged)
    }

    @Test func block_without_schedule_blocks_around_the_clock() {
        let rules = ProfileRules(blocks: [Block(entry: "instagram", created: Self.at("2026-11-01 00:00"), cooldownUntil: Self.at("2026-11-01 02:00"), reason: "exams")])
        for time in ["2026-11-23 03:00", "2026-11-23 12:00", "2026-11-29 23:59"] {
            let s = rules.status(of: "instagram", at: Self.at(time))
            #expect(s.state == .blocked && s.nextChange == nil && s.reason == "exams")
        }
    }

    @Test func block_window_is_blocked_inside_and_scheduled_outside() {
        let rules = ProfileRules(schedules: [RulesTime.schedule("09:00", "17:00", days: .weekdays, reason: "deep work")])
        let inside = rules.status(of: "instagram", at: Self.at("2026-11-23 10:00"))
        #expect(inside.state == .blocked && inside.nextChange == Self.at("2026-11-23 17:00") && inside.reason == "deep work")
        let outside = rules.status(of: "instagram", at: Self.at("2026-11-23 18:00"))
        #expect(outside.state == .scheduled && outside.nextChange == Self.at("2026-11-24 09:00"))
        // Friday evening → Monday morning.
        #expect(rules.status(of: "instagram", at: Self.at("2026-11-27 17:00")).nextChange == Self.at("2026-11-30 09:00"))
        #expect(rules.status(of: "tiktok", at: Self.at("2026-11-23 10:00")).state == .none)
    }

    /// `spendStops`: where a running spend stops buying anything — a curfew starts, or the block it
    /// opened ends; its own end (open → blocked) is not a stop.
    @Test func spend_stops_at_a_curfew_start_or_a_block_window_end_but_not_at_its_own_end() {
        let spend = Self.grant("instagram", from: "2026-11-23 12:00", minutes: 30)
        let window = ProfileRules(schedules: [RulesTime.schedule("11:00", "12:10")], grants: [spend])
        let ended = window.spendStops(on: "instagram", from: Self.at("2026-11-23 12:00"), to: Self.at("2026-11-23 12:30"))
        #expect(ended?.at == Self.at("2026-11-23 12:10") && ended?.curfew == false)
        #expect(window.spendStops(on: "instagram", from: Self.at("2026-11-23 12:00"), to: Self.at("2026-11-23 12:09")) == nil)

        let block = Block(entry: "instagram", created: Self.at("2026-11-01 00:00"), cooldownUntil: Self.at("2026-11-01 02:00"))
        let curfew = ProfileRules(blocks: [block], schedules: [RulesTime.schedule("12:20", "13:00", kind: .curfew, name: "lunch")], grants: [spend])
        let shut = curfew.spendStops(on: "instagram", from: Self.at("2026-11-23 12:00"), to: Self.at("2026-11-23 12:30"))
        #expect(shut?.at == Self.at("2026-11-23 12:20") && shut?.curfew == true)

        let plain = ProfileRules(blocks: [block], grants: [spend])
        #expect(plain.spendStops(on: "instagram", from: Self.at("2026-11-23 12:00"), to: Self.at("2026-11-23 12:30")) == nil)
    }

    @Test func grant_opens_a_block_until_it_ends() {
        let rules = ProfileRules(
            blocks: [Block(entry: "instagram", created: Self.at("2026-11-01 00:00"), cooldownUntil: Self.at("2026-11-01 02:00"))],
            grants: [Self.grant("instagram", from: "2026-11-23 12:00", minutes: 10)]
        )
        let during = rules.status(of: "instagram", at: Self.at("2026-11-23 12:05"))
        #expect(during.state == .open(until: Self.at("2026-11-23 12:10")) && during.nextChange == Self.at("2026-11-23 12:10"))
        let before = rules.status(of: "instagram", at: Self.at("2026-11-23 11:00"))
        #expect(before.state == .blocked && before.nextChange == Self.at("2026-11-23 12:00"))
        #expect(rules.status(of: "instagram", at: Self.at("2026-11-23 12:10")).state == .blocked)
    }

    @Test func curfew_beats_a_running_grant() {
        let rules = ProfileRules(
            blocks: [Block(entry: "instagram", created: Self.at("2026-11-01 00:00"), cooldownUntil: Self.at("2026-11-01 02:00"))],
            schedules: [RulesTime.schedule("23:00", "07:00", kind: .curfew, reason: "sleep")],
            grants: [Self.grant("instagram", from: "2026-11-23 22:55", minutes: 10, kind: .token)]
        )
        // The token would run to 23:05, but it is open only until the curfew starts.
        #expect(rules.status(of: "instagram", at: Self.at("2026-11-23 22:56")).state == .open(until: Self.at("2026-11-23 23:00")))
        // The grant would run to 23:05, but the curfew starts at 23:00 and nothing opens in it.
        #expect(rules.status(of: "instagram", at: Self.at("2026-11-23 22:56")).nextChange == Self.at("2026-11-23 23:00"))
        let inCurfew = rules.status(of: "instagram", at: Self.at("2026-11-23 23:02"))
        #expect(inCurfew.state == .curfew && inCurfew.reason == "sleep" && inCurfew.nextChange == Self.at("2026-11-24 07:00"))
        // After the curfew the around-the-clock block holds.
        #expect(rules.status(of: "instagram", at: Self.at("2026-11-24 07:00")).state == .blocked)
    }

    @Test func edges_that_change_nothing_are_skipped_for_next_change() {
        // Around-the-clock block plus a block window: the window's edges do not change the state.
        let rules = ProfileRules(
            blocks: [Block(entry: "instagram", created: Self.at("2026-11-01 00:00"), cooldownUntil: Self.at("2026-11-01 02:00"))],
            schedules: [RulesTime.schedule("09:00", "17:00"), RulesTime.schedule("22:00", "06:00", kind: .curfew)]
        )
        let s = rules.status(of: "instagram", at: Self.at("2026-11-23 08:00"))
        #expect(s.state == .blocked && s.nextChange == Self.at("2026-11-23 22:00"))
    }

    @Test func strict_curfew_sets_the_profile_flag_and_puts_named_entries_in_curfew() {
        let rules = ProfileRules(
            blocks: [Block(entry: "instagram", created: Self.at("2026-11-01 00:00"), cooldownUntil: Self.at("2026-11-01 02:00"))],
            schedules: [RulesTime.schedule("23:00", "06:00", entries: [], kind: .strictCurfew)])
        let night = rules.evaluate(entries: ["instagram", "news.example.com"], at: Self.at("2026-11-24 01:00"))
        #expect(night.isStrictCurfew && night.strictCurfewUntil == Self.at("2026-11-24 06:00"))
        #expect(night.entries[0].state == .curfew && night.entries[0].nextChange == Self.at("2026-11-24 06:00"))
        let day = rules.evaluate(entries: ["instagram"], at: Self.at("2026-11-24 12:00"))
        #expect(!day.isStrictCurfew && day.strictCurfewNextEdge == Self.at("2026-11-24 23:00"))
        #expect(day.entries[0].state == .blocked)
    }

    @Test func strict_curfew_blocks_an_unnamed_name_through_the_profile_flag_without_managing_it() {
        let rules = ProfileRules(
            blocks: [Block(entry: "instagram", created: Self.at("2026-11-01 00:00"), cooldownUntil: Self.at("2026-11-01 02:00"))],
            schedules: [RulesTime.schedule("23:00", "06:00", entries: [], kind: .strictCurfew)])
        for time in ["2026-11-24 01:00", "2026-11-24 12:00"] {
            let state = rules.evaluate(entries: ["instagram", "news.example.com"], at: Self.at(time))
            let unnamed = state.entries[1]
            #expect(unnamed.state == .none && !unnamed.state.isManaged, "\(time)")
            #expect(unnamed.nextChange == nil, "no rule of the entry's own changes it (\(time))")
            #expect(rules.lockedUntil(of: "news.example.com", at: Self.at(time)) == nil)
        }
        // In the snapshot, set 1 = instagram's names, set 2 = the unnamed entry's names.
        let at = Self.at("2026-11-24 01:00")
        let snapshot = EnforcementSnapshot(entrySets: [[], [0], [1]], entries: ["instagram", "news.example.com"],
                                           profiles: [rules], builtAt: at)
        let unnamed = snapshot.decide(profile: 0, set: 2, now: at)
        #expect(unnamed.blocked && !unnamed.managed)
        let named = snapshot.decide(profile: 0, set: 1, now: at)
        #expect(named.blocked && named.managed)
        let noon = Self.at("2026-11-24 12:00")
        let daySnapshot = EnforcementSnapshot(entrySets: [[], [0], [1]], entries: ["instagram", "news.example.com"],
                                              profiles: [rules], builtAt: noon)
        let unnamedByDay = daySnapshot.decide(profile: 0, set: 2, now: noon)
        #expect(!unnamedByDay.blocked && !unnamedByDay.managed)
    }

    @Test func focus_session_blocks_now_and_ends_on_time() throws {
        let now = Self.at("2026-11-23 14:00")
        let focus = try FocusSession(id: 7, entries: ["youtube"], startingAt: now, length: .minutes(45), reason: "essay")
        let rules = ProfileRules(focusSessions: [focus])
        let s = rules.status(of: "youtube", at: now)
        #expect(s.state == .blocked && s.nextChange == now + .minutes(45) && s.reason == "essay")
        #expect(rules.status(of: "youtube", at: now + .minutes(45)).state == .none)
        #expect(rules.lockedUntil(of: "youtube", at: now + .minutes(10)) == now + .minutes(45))
    }

    @Test func locked_until_is_the_latest_lock_on_the_entry() {
        let rules = ProfileRules(
            blocks: [Block(entry: "instagram", created: Self.at("2026-11-23 21:00"), cooldownUntil: Self.at("2026-11-23 23:00"))],
            schedules: [RulesTime.schedule("23:00", "07:00", kind: .curfew)]
        )
        #expect(rules.lockedUntil(of: "instagram", at: Self.at("2026-11-23 22:00")) == Self.at("2026-11-23 23:00"))
        #expect(rules.lockedUntil(of: "instagram", at: Self.at("2026-11-23 22:45")) == Self.at("2026-11-24 07:00"))
        #expect(rules.lockedUntil(of: "instagram", at: Self.at("2026-11-24 12:00")) == nil)
    }

    @Test(arguments: [("2026-11-24 01:30", EntryState.curfew), ("2026-11-23 01:30", EntryState.scheduled)])
    func curfew_23_to_07_on_mondays_at_0130(time: String, expected: EntryState) {
        let rules = ProfileRules(schedules: [RulesTime.schedule("23:00", "07:00", days: .monday, kind: .curfew)])
        #expect(rules.status(of: "instagram", at: Self.at(time)).state == expected)
    }
}

extension RulesEntryStateTests {
    @Test func focus_session_cannot_be_ended_early() throws {
        let now = Self.at("2026-11-23 14:00")
        let focus = try FocusSession(id: 1, entries: ["youtube"], startingAt: now, length: .minutes(45))
        let refusal = try #require(throws: Refusal.self) { try ChangeRules.checkEndFocus(focus, at: now + .minutes(5)) }
        #expect(refusal.rule == .cooldown && refusal.opensAt == now + .minutes(45) && refusal.message.contains("40 min to go"))
        try ChangeRules.checkEndFocus(focus, at: now + .minutes(45))
    }
}

@Suite struct RulesReminderTests {
    static func at(_ text: String) -> Instant { RulesTime.local(text, "Europe/Berlin") }

    @Test func curfew_reminder_is_due_ten_minutes_before_start() throws {
        let rules = ProfileRules(schedules: [
            RulesTime.schedule("23:00", "07:00", entries: ["a", "b", "c", "d"], kind: .curfew, name: "night", reason: "sleep"),
            RulesTime.schedule("21:00", "22:00", kind: .block, name: "evening"),
        ])
        let r = try #require(rules.nextCurfewReminder(after: Self.at("2026-11-23 12:00")))
        #expect(r.remindAt == Self.at("2026-11-23 22:50") && r.occurrence.start == Self.at("2026-11-23 23:00"))
        #expect(r.message == "Curfew “night” (sleep) starts in 10 minutes; 4 entries will be blocked. A good moment to wrap up.")
        // Once due, the next one is tomorrow's.
        #expect(rules.nextCurfewReminder(after: r.remindAt)?.remindAt == Self.at("2026-11-24 22:50"))
    }

    @Test func disabled_curfews_and_block_windows_send_no_reminder() {
        var off = RulesTime.schedule("23:00", "07:00", kind: .curfew)
        off.enabled = false
        #expect(ProfileRules(schedules: [off, RulesTime.schedule("23:00", "07:00")]).nextCurfewReminder(after: Self.at("2026-11-23 12:00")) == nil)
    }
}
