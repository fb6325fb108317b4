/// A local wall-clock time of day, `HH:MM` (SPEC §2). Minutes only: windows start on the minute.
public struct LocalTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// 0 ..< 1440.
    public let minuteOfDay: Int

    /// - Returns: nil when the hour is not 0–23 or the minute not 0–59.
    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        minuteOfDay = hour * 60 + minute
    }

    /// Parses a time of day as people type it: `HH:MM` or `H:MM` on a 24-hour clock (`21:00`,
    /// `9:30`), or on a 12-hour clock with `am`/`pm`, with or without minutes and a space (`9pm`,
    /// `9:30pm`, `9:30 pm`, `12am` is midnight, `12pm` noon). ASCII digits only.
    public static func parse(_ text: String) throws(ScheduleError) -> LocalTime {
        guard let time = read(text) else { throw .invalidTime(text) }
        return time
    }

    private static func read(_ text: String) -> LocalTime? {
        var body = Substring(text.lowercased())
        var half: Int?  // 0 for am, 12 for pm
        if body.hasSuffix("am") || body.hasSuffix("pm") {
            half = body.hasSuffix("pm") ? 12 : 0
            body = body.dropLast(2)
            while body.last == " " { body = body.dropLast() }
        }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), (1...2).contains(parts[0].count),
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let h = Int(parts[0])
        else { return nil }
        var minute = 0
        if parts.count == 2 {
            guard parts[1].count == 2, let m = Int(parts[1]) else { return nil }
            minute = m
        }
        guard let half else {
            // A bare hour (`21`) is refused: without a colon or am/pm it may be meant as a length.
            return parts.count == 2 ? LocalTime(hour: h, minute: minute) : nil
        }
        guard (1...12).contains(h) else { return nil }
        return LocalTime(hour: h % 12 + half, minute: minute)
    }

    public var hour: Int { minuteOfDay / 60 }
    public var minute: Int { minuteOfDay % 60 }

    public static func < (a: LocalTime, b: LocalTime) -> Bool { a.minuteOfDay < b.minuteOfDay }

    public var description: String {
        (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}
