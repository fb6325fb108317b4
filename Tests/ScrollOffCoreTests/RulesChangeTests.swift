import Testing
import ScrollOffCore

/// Cooldowns (SPEC §3) and the curfew edit lock (SPEC §2).
@Suite struct RulesChangeTests {
    static let zone = "Europe/Berlin"
    static let cooldown = Span.hours(2)

    // MARK: Curfew edit lock

    @Test(arguments: [
        ("2026-11-23 22:31", true),   // start − 29 min
        ("2026-11-23 22:30", true),   // start − 30 min exactly
        ("2026-11-23 22:29", false),  // start − 31 min
        ("2026-11-24 03:00", true),   // running
        ("2026-11-24 07:00", false),  // just ended
    ] as [(String, Bool)])
    func curfew_edit_lock_runs_from_30_minutes_before_start_until_end(now: String, locked: Bool) {
        let curfew = RulesTime.schedule("23:00", "07:00", kind: .curfew, reason: "sleep before exams")
        let t = RulesTime.local(now, Self.zone)
        var edited = curfew
        edited.reason = "sleep"
        edited.end = RulesTime.time("08:00") // a strengthening: only the lock can refuse it
        do {
            _ = try ChangeRules.edit(from: curfew, to: edited, at: t, cooldown: Self.cooldown)
            #expect(!locked)
        } catch {
            #expect(locked)
            #expect(error.rule == .curfewEditLock)
            #expect(error.opensAt == RulesTime.local("2026-11-24 07:00", Self.zone))
            #expect(error.reason == "sleep before exams")
            #expect(error.message.contains("when it ends"))
        }
    }

    @Test func edit_refused_at_start_minus_29_and_allowed_at_start_minus_31() throws {
        let curfew = RulesTime.schedule("23:00", "07:00", kind: .curfew)
        var longer = curfew
        longer.start = RulesTime.time("22:00")
        #expect(throws: Refusal.self) {
            try ChangeRules.edit(from: curfew, to: longer, at: RulesTime.local("2026-11-23 22:31", Self.zone), cooldown: Self.cooldown)
        }
        let ok = try ChangeRules.edit(from: curfew, to: longer, at: RulesTime.local("2026-11-23 22:29", Self.zone), cooldown: Self.cooldown)
        #expect(ok.start == RulesTime.time("22:00"))
    }

    @Test func curfew_delete_and_disable_are_refused_inside_the_lock() {
        let curfew = RulesTime.schedule("23:00", "07:00", kind: .curfew)
        let t = RulesTime.local("2026-11-24 01:00", Self.zone)
        #expect(throws: Refusal.self) { try ChangeRules.checkDelete(curfew, at: t) }
        var off = curfew
        off.enabled = false
        #expect(throws: Refusal.self) { try ChangeRules.edit(from: curfew, to: off, at: t, cooldown: Self.cooldown) }
    }

    @Test func block_windows_have_no_edit_lock() {
        let block = RulesTime.schedule("23:00", "07:00", kind: .block)
        #expect(ChangeRules.curfewEditLock(of: block, at: RulesTime.local("2026-11-24 01:00", Self.zone)) == nil)
    }

    // MARK: Cooldown on blocks

    @Test func unblock_is_refused_during_the_cooldown_and_allowed_after() throws {
        let t0 = RulesTime.utc("2026-11-21T20:00:00Z")
        let block = ChangeRules.block("instagram", existing: nil, at: t0, cooldown: Self.cooldown, reason: "exams")
        #expect(block.cooldownUntil == t0 + .hours(2))
        let refusal = try #require(throws: Refusal.self) { try ChangeRules.checkUnblock(block, at: t0 + .minutes(48)) }
        #expect(refusal.rule == .cooldown && refusal.opensAt == t0 + .hours(2) && refusal.reason == "exams")
        #expect(refusal.message.hasPrefix("instagram stays blocked for 1 h 12 min more"))
        try ChangeRules.checkUnblock(block, at: t0 + .hours(2))
    }

    @Test func reblocking_never_shortens_a_running_cooldown() {
        let t0 = RulesTime.utc("2026-11-21T20:00:00Z")
        let strict = ChangeRules.block("instagram", existing: nil, at: t0, cooldown: .hours(2))
        let again = ChangeRules.block("instagram", existing: strict, at: t0 + .minutes(10), cooldown: .minutes(30))
        #expect(again.cooldownUntil == t0 + .hours(2) && again.created == t0)
    }

    @Test func cooldown_is_not_shortened_by_setting_the_clock_back_or_forward() throws {
        let build = RulesTime.utc("2026-11-01T00:00:00Z")
        let t0 = RulesTime.utc("2026-11-21T20:00:00Z")
        let hour: UInt64 = 3_600_000_000_000
        var clock = TrustedClock(anchor: nil, buildDate: build,
                                 reading: ClockReading(wall: t0, monotonicNanoseconds: hour, bootNanoseconds: hour, bootID: "a"))
        let block = ChangeRules.block("instagram", existing: nil, at: clock.now, cooldown: Self.cooldown)

        // 30 min later the person sets the clock 3 h forward: the cooldown would look over on the wall clock.
        _ = clock.advance(to: ClockReading(wall: t0 + .minutes(210), monotonicNanoseconds: hour * 3 / 2, bootNanoseconds: hour * 3 / 2, bootID: "a"))
        #expect(throws: Refusal.self) { try ChangeRules.checkUnblock(block, at: clock.now) }

        // Then 3 h back and restarts the helper in the same boot: still 1 h 20 min to go.
        let restarted = TrustedClock(anchor: clock.anchor, buildDate: build,
                                     reading: ClockReading(wall: t0 - .hours(3), monotonicNanoseconds: hour * 5 / 3, bootNanoseconds: hour * 5 / 3, bootID: "a"))
        let refusal = try #require(throws: Refusal.self) { try ChangeRules.checkUnblock(block, at: restarted.now) }
        #expect(refusal.opensAt == t0 + .hours(2))
        #expect(restarted.now == t0 + .minutes(40))
        #expect(restarted.startJump?.direction == .back)
    }

    // MARK: Cooldown on schedules

    struct EditCase: Sendable, CustomTestStringConvertible {
        var label: String
        var weakens: Bool
        var edit: @Sendable (inout Schedule) -> Void
        var testDescription: String { label }
    }

    static let edits: [EditCase] = [
        EditCase(label: "later start covers less", weakens: true) { $0.start = RulesTime.time("23:30") },
        EditCase(label: "earlier end covers less", weakens: true) { $0.end = RulesTime.time("06:00") },
        EditCase(label: "moved window covers less", weakens: true) { $0.start = RulesTime.time("22:00"); $0.end = RulesTime.time("06:00") },
        EditCase(label: "removing a day", weakens: true) { $0.days = .weekdays },
        EditCase(label: "removing an entry", weakens: true) { $0.entries = ["instagram"] },
        EditCase(label: "disabling", weakens: true) { $0.enabled = false },
        EditCase(label: "curfew to block", weakens: true) { $0.kind = .block },
        EditCase(label: "another time zone", weakens: true) { $0.timeZoneID = "Asia/Tokyo" },
        EditCase(label: "earlier start is stronger", weakens: false) { $0.start = RulesTime.time("22:00") },
        EditCase(label: "later end is stronger", weakens: false) { $0.end = RulesTime.time("08:00") },
        EditCase(label: "adding an entry is stronger", weakens: false) { $0.entries.insert("reddit") },
        EditCase(label: "strict curfew is stronger", weakens: false) { $0.kind = .strictCurfew },
        EditCase(label: "new reason changes no rule", weakens: false) { $0.reason = "sleep" },
    ]

    @Test(arguments: edits)
    func weakening_is_refused_in_cooldown_and_strengthening_passes(c: EditCase) throws {
        // A curfew enabled at 12:00 with a 2 h cooldown; edits at 13:00, far from its 23:00 lock.
        let now = RulesTime.local("2026-11-23 13:00", Self.zone)
        let old = RulesTime.schedule("23:00", "07:00", entries: ["instagram", "tiktok"], kind: .curfew,
                             reason: "sleep before exams", cooldownUntil: RulesTime.local("2026-11-23 14:00", Self.zone))
        var new = old
        c.edit(&new)
        #expect(ScheduleChange(from: old, to: new).weakens == c.weakens)
        if c.weakens {
            let refusal = try #require(throws: Refusal.self) { try ChangeRules.edit(from: old, to: new, at: now, cooldown: Self.cooldown) }
            #expect(refusal.rule == .cooldown && refusal.opensAt == RulesTime.local("2026-11-23 14:00", Self.zone))
            #expect(refusal.reason == "sleep before exams" && refusal.subject == "night")
            // After the cooldown the same edit passes.
            _ = try ChangeRules.edit(from: old, to: new, at: RulesTime.local("2026-11-23 14:00", Self.zone), cooldown: Self.cooldown)
        } else {
            let result = try ChangeRules.edit(from: old, to: new, at: now, cooldown: Self.cooldown)
            // A stronger schedule starts a new cooldown; a reason-only edit leaves it alone.
            let expected = ScheduleChange(from: old, to: new).strengthens ? now + Self.cooldown : old.cooldownUntil
            #expect(result.cooldownUntil == expected)
        }
    }

    @Test func deleting_an_enabled_schedule_is_refused_in_cooldown_but_a_disabled_one_goes() throws {
        let now = RulesTime.local("2026-11-23 13:00", Self.zone)
        var s = RulesTime.schedule("09:00", "10:00", cooldownUntil: now + .hours(1))
        let refusal = try #require(throws: Refusal.self) { try ChangeRules.checkDelete(s, at: now) }
        #expect(refusal.message.contains("deleting") && refusal.message.contains("1 h more"))
        s.enabled = false
        try ChangeRules.checkDelete(s, at: now)
    }

    @Test func adding_a_schedule_validates_and_starts_its_cooldown() throws {
        let now = RulesTime.local("2026-11-23 13:00", Self.zone)
        let added = try ChangeRules.add(RulesTime.schedule("22:00", "06:00"), at: now, cooldown: Self.cooldown)
        #expect(added.cooldownUntil == now + Self.cooldown)
        let refusal = try #require(throws: Refusal.self) {
            try ChangeRules.add(RulesTime.schedule("20:00", "13:00", kind: .curfew), at: now, cooldown: Self.cooldown)
        }
        #expect(refusal.rule == .invalidSchedule && refusal.opensAt == nil)
    }

    @Test func enabling_a_disabled_schedule_starts_a_cooldown() throws {
        let now = RulesTime.local("2026-11-23 13:00", Self.zone)
        var off = RulesTime.schedule("22:00", "06:00")
        off.enabled = false
        var on = off
        on.enabled = true
        let result = try ChangeRules.edit(from: off, to: on, at: now, cooldown: .minutes(30))
        #expect(result.cooldownUntil == now + .minutes(30))
    }

    @Test func lock_on_a_crossing_window_opens_exactly_at_its_end() {
        // A curfew is at most 16 h, so one schedule's locks never chain: the lock opens at the end.
        let curfew = RulesTime.schedule("23:00", "07:00", kind: .curfew)
        #expect(ChangeRules.curfewEditLock(of: curfew, at: RulesTime.local("2026-11-24 06:59", Self.zone)) == RulesTime.local("2026-11-24 07:00", Self.zone))
        #expect(ChangeRules.curfewEditLock(of: curfew, at: RulesTime.local("2026-11-24 07:00", Self.zone)) == nil)
    }
}
