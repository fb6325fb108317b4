/// When the weekly digest is written (SPEC §7): Sunday at 19:00 in the profile's zone,
/// covering the 7 local days Monday to Sunday. 19:00 is early enough to read it the same evening
/// and never falls in a DST gap (those are at night). A helper that was down then writes the
/// missed digest at its next start, once: the week's key (`weekEnding`) makes it once-only.
public enum WeeklyDigest {
    public static let weekday = 1 // Sunday
    public static let hour = 19

    /// The most recent digest moment at or before `now`, with the Sunday it closes.
    public static func latest(atOrBefore now: Instant, calendar: LocalCalendar) -> (weekEnding: LocalCalendar.Day, at: Instant) {
        var day = calendar.day(of: now)
        while true {
            if calendar.weekday(of: day) == weekday {
                let at = calendar.instant(of: day, hour: hour)
                if at <= now { return (day, at) }
            }
            day = calendar.adding(days: -1, to: day)
        }
    }

    /// The first digest moment strictly after `now` (for the timer).
    public static func next(after now: Instant, calendar: LocalCalendar) -> Instant {
        var day = calendar.day(of: now)
        while true {
            if calendar.weekday(of: day) == weekday {
                let at = calendar.instant(of: day, hour: hour)
                if at > now { return at }
            }
            day = calendar.adding(days: 1, to: day)
        }
    }

    /// The event key that makes a week's digest once-only.
    public static func key(weekEnding: LocalCalendar.Day) -> String { "digest-\(weekEnding)" }
}
