/// Days of the week as the SPEC §2 bitmask: Sunday = 1, Monday = 2, … Saturday = 64.
public struct Weekdays: OptionSet, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }

    public static let sunday = Weekdays(rawValue: 1)
    public static let monday = Weekdays(rawValue: 2)
    public static let tuesday = Weekdays(rawValue: 4)
    public static let wednesday = Weekdays(rawValue: 8)
    public static let thursday = Weekdays(rawValue: 16)
    public static let friday = Weekdays(rawValue: 32)
    public static let saturday = Weekdays(rawValue: 64)

    public static let daily = Weekdays(rawValue: 0x7F)
    public static let weekdays: Weekdays = [.monday, .tuesday, .wednesday, .thursday, .friday]
    public static let weekends: Weekdays = [.saturday, .sunday]

    /// Names in bitmask order, as `--days` accepts and `schedule list` prints them.
    static let names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// The single day for a weekday number 0 = Sunday … 6 = Saturday (taken modulo 7).
    @inlinable public static func day(number: Int) -> Weekdays {
        Weekdays(rawValue: UInt8(1) << UInt8(((number % 7) + 7) % 7))
    }

    /// Parses `daily`, `weekdays`, `weekends` or a comma list such as `mon,tue,fri` (SPEC §13
    /// `schedule add --days`). Case-insensitive; full names (`monday`) are accepted too.
    public static func parse(_ text: String) throws(ScheduleError) -> Weekdays {
        let trimmed = text.lowercased().filter { !$0.isWhitespace }
        switch trimmed {
        case "daily", "everyday": return .daily
        case "weekdays": return .weekdays
        case "weekends": return .weekends
        default: break
        }
        var days: Weekdays = []
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            guard part.count >= 3,
                  let index = names.firstIndex(where: { part.hasPrefix($0) }),
                  fullNames[index].hasPrefix(part)
            else { throw .invalidDays(text) }
            days.insert(.day(number: index))
        }
        guard !days.isEmpty else { throw .invalidDays(text) }
        return days
    }

    private static let fullNames = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    public var description: String {
        switch self {
        case .daily: return "daily"
        case .weekdays: return "weekdays"
        case .weekends: return "weekends"
        default:
            // Monday first, as people read a week.
            return [1, 2, 3, 4, 5, 6, 0].filter { contains(.day(number: $0)) }.map { Self.names[$0] }.joined(separator: ",")
        }
    }
}
