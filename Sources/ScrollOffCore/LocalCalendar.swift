import Foundation

/// Local-day arithmetic in a profile's IANA time zone: where days, months and midnights fall.
/// Counters reset and credit expires at local midnight (SPEC §4, §5), so every module asks here
/// rather than doing its own calendar math.
public struct LocalCalendar: Sendable {
    public let timeZone: TimeZone
    private let calendar: Calendar

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        self.calendar = c
    }

    /// - Returns: nil when `identifier` is not a known IANA zone.
    public init?(identifier: String) {
        guard let tz = TimeZone(identifier: identifier) else { return nil }
        self.init(timeZone: tz)
    }

    /// A day in the local calendar, comparable and usable as a key (`2026-11-21`).
    public struct Day: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
        public var year: Int, month: Int, day: Int
        public init(year: Int, month: Int, day: Int) { self.year = year; self.month = month; self.day = day }
        public static func < (a: Day, b: Day) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
        public var description: String {
            func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
            return "\(year)-\(pad(month))-\(pad(day))"
        }
    }

    /// A calendar month, the period of the token allowance (SPEC §5).
    public struct Month: Hashable, Comparable, Sendable, Codable {
        public var year: Int, month: Int
        public init(year: Int, month: Int) { self.year = year; self.month = month }
        public static func < (a: Month, b: Month) -> Bool { (a.year, a.month) < (b.year, b.month) }
    }

    public func day(of t: Instant) -> Day {
        let c = calendar.dateComponents([.year, .month, .day], from: t.date)
        return Day(year: c.year ?? 1970, month: c.month ?? 1, day: c.day ?? 1)
    }

    public func month(of t: Instant) -> Month {
        let d = day(of: t)
        return Month(year: d.year, month: d.month)
    }

    /// Weekday of the local day containing `t`, 1 = Sunday … 7 = Saturday (the SPEC §2 bitmask is `1 << (weekday-1)`).
    public func weekday(of t: Instant) -> Int { calendar.component(.weekday, from: t.date) }

    /// The local wall-clock hour (0…23) of `t`: where an urge falls in the SPEC §7 heatmap.
    public func hour(of t: Instant) -> Int { calendar.component(.hour, from: t.date) }

    /// The weekday of `day`, 1 = Sunday … 7 = Saturday.
    public func weekday(of day: Day) -> Int { weekday(of: startOfDay(day)) }

    /// `day` at `hour`:00 local time. For hours a DST change skips, the first valid instant after it.
    public func instant(of day: Day, hour: Int) -> Instant {
        var c = DateComponents()
        c.year = day.year; c.month = day.month; c.day = day.day; c.hour = hour
        return Instant(date: calendar.date(from: c) ?? Date(timeIntervalSince1970: 0))
    }

    /// The first instant of the local day containing `t`. On a day whose midnight is skipped by DST,
    /// this is the first instant that exists on that day.
    public func startOfDay(containing t: Instant) -> Instant { Instant(date: calendar.startOfDay(for: t.date)) }

    /// The first instant of `day`.
    public func startOfDay(_ day: Day) -> Instant {
        var c = DateComponents()
        c.year = day.year; c.month = day.month; c.day = day.day
        c.hour = 12 // noon always exists; startOfDay then finds the real first instant
        let noon = calendar.date(from: c) ?? Date(timeIntervalSince1970: 0)
        return Instant(date: calendar.startOfDay(for: noon))
    }

    /// The next local midnight strictly after `t`: where peeks reset and same-day credit expires.
    public func nextMidnight(after t: Instant) -> Instant {
        startOfDay(adding(days: 1, to: day(of: t)))
    }

    /// `day` moved by `days` calendar days.
    public func adding(days: Int, to day: Day) -> Day {
        var c = DateComponents()
        c.year = day.year; c.month = day.month; c.day = day.day; c.hour = 12
        let noon = calendar.date(from: c) ?? Date(timeIntervalSince1970: 0)
        let moved = calendar.date(byAdding: .day, value: days, to: noon) ?? noon
        let r = calendar.dateComponents([.year, .month, .day], from: moved)
        return Day(year: r.year ?? day.year, month: r.month ?? day.month, day: r.day ?? day.day)
    }
}
