import Testing
import ScrollOffCore

/// Windows on the timeline: midnight crossing, weekdays and DST (SPEC §2).
@Suite struct ScheduleOccurrenceTests {
    // 2026-11-23 is a Monday, 2026-11-24 a Tuesday.
    @Test func curfew_crossing_midnight_blocks_at_0130_on_the_day_after_its_weekday() {
        let monday = RulesTime.schedule("23:00", "07:00", days: .monday, kind: .curfew)
        let tuesday0130 = RulesTime.local("2026-11-24 01:30", "Europe/Berlin")
        #expect(monday.isActive(at: tuesday0130))
        #expect(monday.occurrence(containing: tuesday0130) == Occurrence(
            start: RulesTime.local("2026-11-23 23:00", "Europe/Berlin"), end: RulesTime.local("2026-11-24 07:00", "Europe/Berlin")))
    }

    @Test func curfew_crossing_midnight_is_off_at_0130_on_its_own_weekday() {
        // Monday 01:30 would belong to a Sunday window, and Sunday is not in the schedule.
        let monday = RulesTime.schedule("23:00", "07:00", days: .monday, kind: .curfew)
        #expect(!monday.isActive(at: RulesTime.local("2026-11-23 01:30", "Europe/Berlin")))
        #expect(monday.isActive(at: RulesTime.local("2026-11-23 23:00", "Europe/Berlin")))
        #expect(!monday.isActive(at: RulesTime.local("2026-11-24 07:00", "Europe/Berlin")))
    }

    @Test func disabled_schedule_is_never_active() {
        var s = RulesTime.schedule("00:00", "23:59")
        s.enabled = false
        #expect(!s.isActive(at: RulesTime.local("2026-11-23 12:00", "Europe/Berlin")))
    }

    @Test(arguments: [
        // (now, expected next edge) for a daily 23:00→07:00 window in Berlin.
        ("2026-11-23 12:00", "2026-11-23 23:00"),
        ("2026-11-23 23:00", "2026-11-24 07:00"),
        ("2026-11-24 03:00", "2026-11-24 07:00"),
        ("2026-11-24 07:00", "2026-11-24 23:00"),
    ])
    func next_edge_is_the_next_start_or_end(now: String, edge: String) {
        let s = RulesTime.schedule("23:00", "07:00")
        #expect(s.nextEdge(after: RulesTime.local(now, "Europe/Berlin")) == RulesTime.local(edge, "Europe/Berlin"))
    }

    @Test func next_edge_skips_days_not_in_the_schedule() {
        let s = RulesTime.schedule("09:00", "17:00", days: .weekends)
        // Monday noon → Saturday 09:00.
        #expect(s.nextEdge(after: RulesTime.local("2026-11-23 12:00", "Europe/Berlin")) == RulesTime.local("2026-11-28 09:00", "Europe/Berlin"))
    }

    @Test func saturday_window_crossing_midnight_wraps_into_sunday() {
        let s = RulesTime.schedule("22:00", "02:00", days: .saturday)
        #expect(s.isActive(at: RulesTime.local("2026-11-29 01:00", "Europe/Berlin")))
        #expect(!s.isActive(at: RulesTime.local("2026-11-30 01:00", "Europe/Berlin")))
    }

    @Test func zone_of_the_schedule_decides_the_window_not_utc() {
        let ny = RulesTime.schedule("09:00", "10:00", zone: "America/New_York")
        #expect(ny.isActive(at: RulesTime.utc("2026-11-23T14:30:00Z")))  // 09:30 EST
        #expect(!ny.isActive(at: RulesTime.utc("2026-11-23T09:30:00Z")))
    }

    // MARK: DST (SPEC §2: start in a skipped hour → first valid instant after it; end in a repeated
    // hour → its first occurrence). Transitions used, all 2026:
    // Berlin  spring 03-29 01:00Z (02:00 CET → 03:00 CEST), fall 10-25 01:00Z (03:00 CEST → 02:00 CET)
    // New York spring 03-08 07:00Z (02:00 EST → 03:00 EDT), fall 11-01 06:00Z (02:00 EDT → 01:00 EST)

    struct DSTCase: Sendable, CustomTestStringConvertible {
        var label: String, zone: String, from: String, to: String, probe: String, start: String, end: String
        var testDescription: String { label }
    }

    static let dstCases: [DSTCase] = [
        DSTCase(label: "Berlin spring: start 02:30 in the gap starts at 03:00 CEST", zone: "Europe/Berlin",
                from: "02:30", to: "06:00", probe: "2026-03-29T02:00:00Z",
                start: "2026-03-29T01:00:00Z", end: "2026-03-29T04:00:00Z"),
        DSTCase(label: "Berlin spring: end 02:30 in the gap ends at 03:00 CEST", zone: "Europe/Berlin",
                from: "23:00", to: "02:30", probe: "2026-03-29T00:30:00Z",
                start: "2026-03-28T22:00:00Z", end: "2026-03-29T01:00:00Z"),
        DSTCase(label: "Berlin spring: 22:00→06:00 across the change lasts 7 h", zone: "Europe/Berlin",
                from: "22:00", to: "06:00", probe: "2026-03-29T03:59:00Z",
                start: "2026-03-28T21:00:00Z", end: "2026-03-29T04:00:00Z"),
        DSTCase(label: "Berlin fall: end 02:30 in the repeated hour ends at its first occurrence", zone: "Europe/Berlin",
                from: "22:00", to: "02:30", probe: "2026-10-25T00:00:00Z",
                start: "2026-10-24T20:00:00Z", end: "2026-10-25T00:30:00Z"),
        DSTCase(label: "Berlin fall: start 02:30 in the repeated hour starts at its first occurrence", zone: "Europe/Berlin",
                from: "02:30", to: "05:00", probe: "2026-10-25T01:15:00Z",
                start: "2026-10-25T00:30:00Z", end: "2026-10-25T04:00:00Z"),
        DSTCase(label: "Berlin fall: 22:00→06:00 across the change lasts 9 h", zone: "Europe/Berlin",
                from: "22:00", to: "06:00", probe: "2026-10-25T04:59:00Z",
                start: "2026-10-24T20:00:00Z", end: "2026-10-25T05:00:00Z"),
        DSTCase(label: "New York spring: start 02:15 in the gap starts at 03:00 EDT", zone: "America/New_York",
                from: "02:15", to: "05:00", probe: "2026-03-08T07:30:00Z",
                start: "2026-03-08T07:00:00Z", end: "2026-03-08T09:00:00Z"),
        DSTCase(label: "New York spring: 22:00→06:00 across the change lasts 7 h", zone: "America/New_York",
                from: "22:00", to: "06:00", probe: "2026-03-08T09:59:00Z",
                start: "2026-03-08T03:00:00Z", end: "2026-03-08T10:00:00Z"),
        DSTCase(label: "New York fall: end 01:30 in the repeated hour ends at its first occurrence", zone: "America/New_York",
                from: "22:00", to: "01:30", probe: "2026-11-01T05:00:00Z",
                start: "2026-11-01T02:00:00Z", end: "2026-11-01T05:30:00Z"),
        DSTCase(label: "New York fall: 22:00→06:00 across the change lasts 9 h", zone: "America/New_York",
                from: "22:00", to: "06:00", probe: "2026-11-01T10:59:00Z",
                start: "2026-11-01T02:00:00Z", end: "2026-11-01T11:00:00Z"),
        // Lord Howe Island moves by 30 minutes (02:00 → 02:30 on 2026-10-04, 15:30Z): the same rule holds.
        DSTCase(label: "Lord Howe spring: start 02:15 in a 30-minute gap starts at 02:30", zone: "Australia/Lord_Howe",
                from: "02:15", to: "04:00", probe: "2026-10-03T16:00:00Z",
                start: "2026-10-03T15:30:00Z", end: "2026-10-03T17:00:00Z"),
    ]

    @Test(arguments: dstCases)
    func dst_windows_follow_the_spec(c: DSTCase) {
        let s = RulesTime.schedule(c.from, c.to, zone: c.zone)
        let o = s.occurrence(containing: RulesTime.utc(c.probe))
        #expect(o == Occurrence(start: RulesTime.utc(c.start), end: RulesTime.utc(c.end)))
        #expect(!s.isActive(at: RulesTime.utc(c.end)))
        #expect(!s.isActive(at: RulesTime.utc(c.start) - Span(milliseconds: 1)))
    }

    @Test func window_inside_the_skipped_hour_has_no_occurrence_that_day() {
        // 02:10→02:50 does not exist in Berlin on 2026-03-29: both ends resolve to 03:00 CEST.
        let s = RulesTime.schedule("02:10", "02:50")
        #expect(!s.isActive(at: RulesTime.utc("2026-03-29T01:00:00Z")))
        #expect(s.occurrences(from: RulesTime.utc("2026-03-28T00:00:00Z"), to: RulesTime.utc("2026-03-31T00:00:00Z")).count == 2)
    }

    @Test func next_edge_in_spring_forward_gap_is_the_transition() {
        let s = RulesTime.schedule("02:30", "06:00", zone: "America/New_York")
        #expect(s.nextEdge(after: RulesTime.utc("2026-03-08T06:00:00Z")) == RulesTime.utc("2026-03-08T07:00:00Z"))
    }
}
