/// Why a schedule or focus session cannot be accepted as written (SPEC §2). Waiting does not help,
/// so these are separate from the time-bound ``Refusal``s; ``refusal`` converts for the CLI's exit 1.
public enum ScheduleError: Error, Hashable, Sendable {
    case invalidTime(String)
    case invalidDays(String)
    case startEqualsEnd(LocalTime)
    case curfewTooLong(minutes: Int)
    /// Curfews that touch or overlap join into one run longer than the cap (`CurfewJoin`); entry nil
    /// for strict curfews alone.
    case curfewsJoinTooLong(entry: String?, schedules: [String], minutes: Int)
    case unknownTimeZone(String)
    case noEntries
    case noDays
    case emptyName
    case nonPositiveFocusLength

    /// What failed and what to do, in one sentence.
    public var message: String {
        switch self {
        case .invalidTime(let text):
            return "“\(text)” is not a time of day: write 21:00, 9:30, 9pm or 9:30pm (a 24-hour HH:MM, or 1–12 with am or pm)."
        case .invalidDays(let text):
            return "“\(text)” is not a set of days; use daily, weekdays, weekends or a list such as mon,wed,fri."
        case .startEqualsEnd(let time):
            return "The window starts and ends at \(time), so it would cover nothing; choose an end time different from the start."
        case .curfewTooLong(let minutes):
            return "This curfew would last \(minutes / 60) h \(minutes % 60) min; a curfew can last at most 16 h (960 min), so move the start or the end closer together."
        case .curfewsJoinTooLong(let entry, let schedules, let minutes):
            let names = schedules.map { "“\($0)”" }.joined(separator: " and ")
            let length = minutes >= 7 * 1440 ? "round the clock" : "\(minutes / 60) h \(minutes % 60) min in a row"
            let what = entry.map { "\($0) in curfew" } ?? "every name in strict curfew"
            return "The curfews \(names) touch or overlap, so together they would keep \(what) \(length); "
                + "joined curfews count as one, and a curfew can last at most 16 h (960 min). "
                + "Leave a gap between them, or shorten one (`scrolloff schedule list` shows them)."
        case .unknownTimeZone(let id):
            return "“\(id)” is not a known IANA time zone; use a name such as Europe/Berlin or America/New_York."
        case .noEntries:
            return "A schedule needs at least one entry; name them with --entries, for example --entries instagram,tiktok."
        case .noDays:
            return "A schedule needs at least one day; use --days daily, weekdays, weekends or a list such as mon,tue."
        case .emptyName:
            return "A schedule needs a name, so you can list or change it later."
        case .nonPositiveFocusLength:
            return "A focus session needs a length above zero, for example 45m."
        }
    }

    public var refusal: Refusal {
        Refusal(rule: .invalidSchedule, message: message)
    }
}
