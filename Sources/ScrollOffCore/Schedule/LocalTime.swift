/// A local wall-clock time of day, `HH:MM` (SPEC §2). Minutes only: windows start on the minute.
public struct LocalTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// 0 ..< 1440.
    public let minuteOfDay: Int

    /// - Returns: nil when the hour is not 0–23 or the minute not 0–59.
    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        minuteOfDay = hour * 60 + minute
    }

    /// Parses `HH:MM` or `H:MM` (24-hour clock).
    public static func parse(_ text: String) throws(ScheduleError) -> LocalTime {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let h = Int(parts[0]), let m = Int(parts[1]), let time = LocalTime(hour: h, minute: m)
        else { throw .invalidTime(text) }
        return time
    }

    public var hour: Int { minuteOfDay / 60 }
    public var minute: Int { minuteOfDay % 60 }

    public static func < (a: LocalTime, b: LocalTime) -> Bool { a.minuteOfDay < b.minuteOfDay }

    public var description: String {
        (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}
