import Foundation

/// A named set of weekly windows that blocks some entries (SPEC §2).
///
/// Every window of a schedule has the same start and end time and repeats on ``days``; a window
/// whose end is earlier than its start crosses midnight and belongs to the day it starts on.
public struct Schedule: Hashable, Sendable, Codable {
    /// How hard a window holds, weakest first so that `<` means "weaker" (SPEC §3 cooldown checks).
    public enum Kind: Int, Hashable, Comparable, Sendable, Codable, CaseIterable {
        /// Entries are blocked; credits, peeks and tokens may open them briefly.
        case block = 0
        /// Nothing opens the entries: no spend, no peek, no token.
        case curfew = 1
        /// A curfew that blocks every name except the always-allow list.
        case strictCurfew = 2

        public var isCurfew: Bool { self != .block }
        public var isStrict: Bool { self == .strictCurfew }
        public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    /// SPEC §2: "A curfew lasts at most 16 hours (960 minutes)".
    public static let maximumCurfewMinutes = 960

    public var name: String
    public var start: LocalTime
    public var end: LocalTime
    public var days: Weekdays
    /// IANA zone identifier (`Europe/Berlin`); windows are local wall time in this zone.
    public var timeZoneID: String
    public var entries: Set<EntryID>
    public var kind: Kind
    /// The person's own words, shown in `status` and in every refusal.
    public var reason: String?
    public var enabled: Bool
    /// Until this instant the schedule cannot be weakened (SPEC §3). Nil: never enabled.
    public var cooldownUntil: Instant?

    public init(
        name: String, start: LocalTime, end: LocalTime, days: Weekdays = .daily, timeZoneID: String,
        entries: Set<EntryID>, kind: Kind = .block, reason: String? = nil, enabled: Bool = true,
        cooldownUntil: Instant? = nil
    ) {
        self.name = name
        self.start = start
        self.end = end
        self.days = days
        self.timeZoneID = timeZoneID
        self.entries = entries
        self.kind = kind
        self.reason = reason
        self.enabled = enabled
        self.cooldownUntil = cooldownUntil
    }

    /// The window's length on the wall clock, in minutes (1 … 1439). DST days may differ in real time.
    public var lengthInMinutes: Int {
        let raw = end.minuteOfDay - start.minuteOfDay
        return raw > 0 ? raw : raw + 1440
    }

    /// Whether the window crosses local midnight.
    public var crossesMidnight: Bool { end < start }

    /// Whether the schedule's windows apply to `entry`: it is named, or the schedule is a strict
    /// curfew, which covers every name (SPEC §2).
    public func covers(_ entry: EntryID) -> Bool { kind.isStrict || entries.contains(entry) }

    /// Checks the rules of SPEC §2 and returns the zone the windows are computed in.
    @discardableResult
    public func validate() throws(ScheduleError) -> TimeZone {
        if name.allSatisfy(\.isWhitespace) { throw .emptyName }
        if start == end { throw .startEqualsEnd(start) }
        if days.isEmpty { throw .noDays }
        // A strict curfew blocks every name anyway, so it may name no entries.
        if entries.isEmpty && !kind.isStrict { throw .noEntries }
        if kind.isCurfew && lengthInMinutes > Self.maximumCurfewMinutes { throw .curfewTooLong(minutes: lengthInMinutes) }
        guard let zone = TimeZone(identifier: timeZoneID) else { throw .unknownTimeZone(timeZoneID) }
        return zone
    }
}
