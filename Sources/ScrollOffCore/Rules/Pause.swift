import Foundation

/// An owner's pause of a whole profile (SPEC §5a): from `start` until `end` every name but the
/// always-allow list answers blocked for the profile's devices, like a strict curfew, and nothing
/// opens an entry (no spend, peek or token). Its end is part of the rules, so the snapshot ends it
/// at its instant whether or not a timer fires; `scrolloff resume` removes it early.
public struct Pause: Hashable, Sendable, Codable {
    public var start: Instant
    public var end: Instant
    /// The owner's words ("dinner"), shown in status, refusals and events.
    public var reason: String?
    /// Who paused it, as the change's actor was known ("alice (uid 1000)").
    public var by: String?

    public init(start: Instant, end: Instant, reason: String? = nil, by: String? = nil) {
        self.start = start
        self.end = end
        self.reason = reason
        self.by = by
    }

    public func isActive(at t: Instant) -> Bool { start <= t && t < end }

    /// The longest pause one command may set: a week, like a focus session (SPEC §2.5, §5a).
    public static let longest: Span = .hours(24 * 7)
}

extension Pause {
    /// The next instant after `t` at which the wall clock of zone `zoneID` reads `time`: today's
    /// when it is still ahead, else tomorrow's (`pause --until 19:30`). DST as for schedules
    /// (SPEC §2.4). Nil for an unknown zone.
    public static func next(_ time: LocalTime, after t: Instant, zoneID: String) -> Instant? {
        guard let zone = TimeZone(identifier: zoneID) else { return nil }
        let clock = ZoneClock(timeZone: zone)
        let today = clock.dayNumber(containing: t)
        for day in today...(today + 2) {
            let candidate = clock.instant(day: day, minuteOfDay: time.minuteOfDay)
            if candidate > t { return candidate }
        }
        return nil
    }
}
