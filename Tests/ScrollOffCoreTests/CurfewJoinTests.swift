import Testing
import PropertyBased
import ScrollOffCore

/// SPEC §2: "The cap holds for the joined coverage of an entry: curfews that touch or overlap
/// count as one" — across schedules, days, midnight and the week's wrap.
@Suite struct CurfewJoinTests {
    static let now = RulesTime.utc("2026-11-23T12:00:00Z") // a Monday, winter time in Berlin

    static func curfew(_ name: String, _ from: String, _ to: String, days: Weekdays = .daily, zone: String = "Europe/Berlin",
                       entries: Set<EntryID> = ["instagram"], kind: Schedule.Kind = .curfew, enabled: Bool = true) -> Schedule {
        var s = RulesTime.schedule(from, to, days: days, zone: zone, entries: entries, kind: kind, name: name)
        s.enabled = enabled
        return s
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var schedules: [Schedule]
        /// Nil: accepted. Otherwise the schedules named and the run's minutes.
        var overrun: (names: [String], minutes: Int)?
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "adjacent 00:00–16:00 and 16:00–00:00 make a curfew round the clock",
             schedules: [curfew("day", "00:00", "16:00"), curfew("evening", "16:00", "00:00")],
             overrun: (["day", "evening"], 7 * 1440)),
        Case(label: "23:00–07:00 and 07:00–15:00 touch and last exactly 16 h",
             schedules: [curfew("night", "23:00", "07:00"), curfew("morning", "07:00", "15:00")], overrun: nil),
        Case(label: "23:00–07:00 and 07:00–15:01 last 16 h 1 min",
             schedules: [curfew("night", "23:00", "07:00"), curfew("morning", "07:00", "15:01")],
             overrun: (["morning", "night"], 961)),
        Case(label: "overlapping 20:00–06:00 and 05:00–12:00 last 16 h",
             schedules: [curfew("night", "20:00", "06:00"), curfew("morning", "05:00", "12:00")], overrun: nil),
        Case(label: "overlapping 19:59–06:00 and 05:00–12:00 last 16 h 1 min",
             schedules: [curfew("night", "19:59", "06:00"), curfew("morning", "05:00", "12:00")],
             overrun: (["morning", "night"], 961)),
        Case(label: "curfews of different entries do not join",
             schedules: [curfew("day", "00:00", "16:00"), curfew("evening", "16:00", "00:00", entries: ["tiktok"])], overrun: nil),
        Case(label: "a block window does not join a curfew",
             schedules: [curfew("day", "00:00", "16:00"), curfew("evening", "16:00", "00:00", kind: .block)], overrun: nil),
        Case(label: "a disabled curfew does not join",
             schedules: [curfew("day", "00:00", "16:00"), curfew("evening", "16:00", "00:00", enabled: false)], overrun: nil),
        Case(label: "Saturday 20:00–04:00 wraps into Sunday 04:00–12:00: 16 h",
             schedules: [curfew("sat", "20:00", "04:00", days: .saturday), curfew("sun", "04:00", "12:00", days: .sunday)], overrun: nil),
        Case(label: "Saturday 20:00–04:00 wraps into Sunday 04:00–12:01: 16 h 1 min",
             schedules: [curfew("sat", "20:00", "04:00", days: .saturday), curfew("sun", "04:00", "12:01", days: .sunday)],
             overrun: (["sat", "sun"], 961)),
        Case(label: "one schedule's days run into each other through another's Monday night",
             schedules: [curfew("days", "08:00", "00:00"), curfew("monday", "00:00", "08:00", days: .monday)],
             overrun: (["days", "monday"], 40 * 60)),
        Case(label: "a strict curfew joins every entry's curfew",
             schedules: [curfew("strict", "00:00", "12:00", entries: [], kind: .strictCurfew), curfew("evening", "12:00", "20:00")],
             overrun: (["evening", "strict"], 20 * 60)),
        Case(label: "two strict curfews join on their own",
             schedules: [curfew("a", "00:00", "12:00", entries: [], kind: .strictCurfew),
                         curfew("b", "12:00", "20:00", entries: [], kind: .strictCurfew)],
             overrun: (["a", "b"], 20 * 60)),
        // Wall time, as one curfew's cap: 18:00–02:00 + 02:00–10:00 is 16 h on the wall clock and
        // 17 h of real time on 2026-10-25, when Berlin's clocks go back.
        Case(label: "a 16 h join over the night the clocks go back is measured on the wall clock",
             schedules: [curfew("evening", "18:00", "02:00"), curfew("night", "02:00", "10:00")], overrun: nil),
        // Different zones join in real time over the coming year: Berlin 22:00–06:00 is 21:00–05:00
        // UTC in winter, and 20:00–05:00 UTC on 2027-10-31, when Berlin's clocks go back.
        Case(label: "curfews in two zones that meet for 15 h in winter and 16 h on the night the clocks go back",
             schedules: [curfew("berlin", "22:00", "06:00"), curfew("utc", "05:00", "12:00", zone: "UTC")], overrun: nil),
        Case(label: "curfews in two zones that meet for 16 h in winter run 17 h on the night the clocks go back",
             schedules: [curfew("berlin", "22:00", "06:00"), curfew("utc", "05:00", "13:00", zone: "UTC")],
             overrun: (["berlin", "utc"], 17 * 60)),
        Case(label: "curfews in two zones that meet in real time last 16 h 1 min in winter",
             schedules: [curfew("berlin", "22:00", "06:00"), curfew("utc", "05:00", "13:01", zone: "UTC")],
             overrun: (["berlin", "utc"], 961)),
    ]

    @Test(arguments: cases)
    func joined_curfews_are_capped_at_16_hours(_ c: Case) {
        let found = CurfewJoin.overrun(in: c.schedules, at: Self.now)
        #expect(found?.schedules == c.overrun?.names, "\(String(describing: found))")
        #expect(found?.minutes == c.overrun?.minutes, "\(String(describing: found))")
    }

    @Test func the_refusal_names_the_schedules_that_join_and_what_to_do() throws {
        let schedules = [Self.curfew("day", "00:00", "16:00"), Self.curfew("evening", "16:00", "00:00")]
        do throws(ScheduleError) {
            try CurfewJoin.check(schedules, involving: "evening", at: Self.now)
            Issue.record("accepted a 24 h curfew")
        } catch {
            #expect(error == .curfewsJoinTooLong(entry: "instagram", schedules: ["day", "evening"], minutes: 7 * 1440))
            #expect(error.message.contains("“day” and “evening” touch or overlap"), "\(error.message)")
            #expect(error.message.contains("instagram in curfew round the clock"), "\(error.message)")
            #expect(error.message.contains("Leave a gap between them, or shorten one"), "\(error.message)")
            #expect(error.refusal.rule == .invalidSchedule)
        }
    }

    @Test func a_run_the_changed_schedule_is_not_part_of_does_not_refuse_it() {
        // Joined before this rule existed; adding an unrelated curfew must still work.
        let schedules = [Self.curfew("day", "00:00", "16:00"), Self.curfew("evening", "16:00", "00:00"),
                         Self.curfew("kids", "21:00", "07:00", entries: ["tiktok"])]
        #expect(CurfewJoin.overrun(in: schedules, involving: "kids", at: Self.now) == nil)
        #expect(CurfewJoin.overrun(in: schedules, involving: "evening", at: Self.now) != nil)
    }

    /// Oracle: sample every hour of three weeks (the random schedules are whole hours in UTC, so
    /// hourly samples see every edge) and find the longest run of consecutive curfew hours for
    /// each entry.
    static func longestRunByOracle(_ schedules: [Schedule]) -> Int {
        let start = RulesPropertyTests.base
        var longest = 0
        for entry: EntryID in ["a", "b", "c"] {
            var run = 0
            for h in 0..<(24 * 21) {
                let t = start + .hours(Int64(h)) + .minutes(30)
                if schedules.contains(where: { $0.kind.isCurfew && $0.covers(entry) && $0.isActive(at: t) }) {
                    run += 1
                    longest = max(longest, run)
                } else {
                    run = 0
                }
            }
        }
        return longest * 60
    }

    @Test func the_rule_refuses_exactly_the_sets_with_a_run_over_16_hours() async {
        await propertyCheck(count: 300, input: RulesPropertyTests.randomSchedule.array(of: 1...4)) { randoms in
            let schedules = randoms.enumerated().map { i, r in r.schedule(name: "s\(i)") }
            let longest = Self.longestRunByOracle(schedules)
            let found = CurfewJoin.overrun(in: schedules, at: RulesPropertyTests.base)
            #expect((found != nil) == (longest > Schedule.maximumCurfewMinutes), "oracle \(longest) min, rule \(String(describing: found))")
            if let found, longest < 21 * 1440 {
                #expect(found.minutes > Schedule.maximumCurfewMinutes && found.minutes <= longest)
            }
        }
    }
}
