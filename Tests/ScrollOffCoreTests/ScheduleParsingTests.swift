import Testing
import ScrollOffCore

@Suite struct ScheduleParsingTests {
    @Test(arguments: [
        ("daily", 127), ("weekdays", 62), ("weekends", 65), ("mon,tue", 6), ("Sun", 1),
        ("sat,sun", 65), ("monday, friday", 34), ("thu", 16), ("tues,thurs", 20),
    ] as [(String, UInt8)])
    func days_parse_to_the_spec_bitmask(text: String, mask: UInt8) throws {
        #expect(try Weekdays.parse(text).rawValue == mask)
    }

    @Test(arguments: ["", "funday", "mo", "mon,,tue", "mon;tue", "monx"])
    func days_parse_rejects_unknown_words(text: String) {
        #expect(throws: ScheduleError.invalidDays(text)) { try Weekdays.parse(text) }
    }

    @Test func days_print_back_as_people_write_them() {
        #expect(Weekdays.daily.description == "daily")
        #expect(Weekdays.weekends.description == "weekends")
        #expect(Weekdays([.sunday, .monday, .friday]).description == "mon,fri,sun")
    }

    @Test(arguments: [("23:00", 1380), ("07:05", 425), ("0:00", 0), ("23:59", 1439), ("9:30", 570)] as [(String, Int)])
    func local_time_parses_hh_mm(text: String, minute: Int) throws {
        #expect(try LocalTime.parse(text).minuteOfDay == minute)
    }

    @Test(arguments: ["24:00", "12:60", "7:5", "ab:cd", "1200", "12:00:00", "-1:00", "١٢:٠٠"])
    func local_time_rejects_malformed_text(text: String) {
        #expect(throws: ScheduleError.invalidTime(text)) { try LocalTime.parse(text) }
    }

    @Test(arguments: [
        ("9pm", 1260), ("9 pm", 1260), ("9PM", 1260), ("9:30pm", 1290), ("9:30 pm", 1290), ("12am", 0), ("12pm", 720),
        ("12:30am", 30), ("7am", 420), ("07:05am", 425), ("11:59pm", 1439), ("1am", 60), ("9:30 PM", 1290),
    ] as [(String, Int)])
    func local_time_parses_the_twelve_hour_clock(text: String, minute: Int) throws {
        #expect(try LocalTime.parse(text).minuteOfDay == minute)
    }

    @Test(arguments: [
        "", "pm", "13pm", "0am", "0:30am", "9", "21", "9:5pm", "9:60pm", "9pmpm", "9 p m", "99999999999pm", "-9pm", "９pm",
        "9:30:00pm", "9 parsecs", "nine pm", "21:00pm", "pm9", " 9pm", "9  pm x",
    ])
    func local_time_rejects_hostile_twelve_hour_text(text: String) {
        #expect(throws: ScheduleError.invalidTime(text)) { try LocalTime.parse(text) }
    }

    @Test func a_refused_time_says_the_accepted_forms_numbers_first() {
        #expect(ScheduleError.invalidTime("25pm").message.contains("write 21:00, 9:30, 9pm or 9:30pm"))
    }

    @Test func start_equal_to_end_is_rejected_with_a_message_saying_what_to_do() {
        let s = RulesTime.schedule("22:00", "22:00")
        #expect(throws: ScheduleError.startEqualsEnd(RulesTime.time("22:00"))) { try s.validate() }
        #expect(ScheduleError.startEqualsEnd(RulesTime.time("22:00")).message.contains("choose an end time"))
    }

    @Test(arguments: [
        ("20:00", "12:00", true),   // 960 min exactly
        ("20:00", "12:01", false),  // 961 min
        ("08:00", "07:59", false),  // 1439 min
        ("23:00", "07:00", true),
    ] as [(String, String, Bool)])
    func curfew_longer_than_960_minutes_is_rejected(from: String, to: String, accepted: Bool) {
        let s = RulesTime.schedule(from, to, kind: .curfew)
        #expect(((try? s.validate()) != nil) == accepted)
        // A block window has no length limit.
        #expect((try? RulesTime.schedule(from, to, kind: .block).validate()) != nil)
    }

    @Test func curfew_too_long_says_how_long_it_was() {
        #expect(throws: ScheduleError.curfewTooLong(minutes: 961)) { try RulesTime.schedule("20:00", "12:01", kind: .curfew).validate() }
        #expect(ScheduleError.curfewTooLong(minutes: 961).message.contains("16 h 1 min"))
        #expect(ScheduleError.curfewTooLong(minutes: 961).refusal.rule == .invalidSchedule)
    }

    @Test func unknown_zone_no_entries_no_days_and_blank_name_are_rejected() {
        #expect(throws: ScheduleError.unknownTimeZone("Mars/Olympus")) { try RulesTime.schedule("22:00", "06:00", zone: "Mars/Olympus").validate() }
        #expect(throws: ScheduleError.noEntries) { try RulesTime.schedule("22:00", "06:00", entries: []).validate() }
        #expect(throws: ScheduleError.noDays) { try RulesTime.schedule("22:00", "06:00", days: []).validate() }
        #expect(throws: ScheduleError.emptyName) { try RulesTime.schedule("22:00", "06:00", name: "  ").validate() }
        // A strict curfew blocks every name, so it needs no entries.
        #expect((try? RulesTime.schedule("22:00", "06:00", entries: [], kind: .strictCurfew).validate()) != nil)
    }

    @Test func focus_session_needs_a_positive_length() throws {
        let now = RulesTime.utc("2026-11-21T20:00:00Z")
        #expect(throws: ScheduleError.nonPositiveFocusLength) {
            try FocusSession(id: 1, entries: ["x"], startingAt: now, length: .zero)
        }
        let f = try FocusSession(id: 1, entries: ["x"], startingAt: now, length: .minutes(45))
        #expect(f.isActive(at: now) && f.isActive(at: now + .minutes(44)) && !f.isActive(at: now + .minutes(45)))
    }
}
