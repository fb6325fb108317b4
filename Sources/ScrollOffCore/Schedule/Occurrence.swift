import Foundation

/// One concrete window on the trusted timeline: `[start, end)`.
public struct Occurrence: Hashable, Sendable, Codable {
    public var start: Instant
    public var end: Instant

    public init(start: Instant, end: Instant) {
        self.start = start
        self.end = end
    }

    @inlinable public func contains(_ t: Instant) -> Bool { start <= t && t < end }
}

extension Schedule {
    /// The zone the windows are computed in. An unknown identifier cannot pass ``validate()``; should
    /// one reach here anyway (an old row), UTC keeps the rules total rather than crashing the helper.
    var zoneClock: ZoneClock { ZoneClock(timeZone: TimeZone(identifier: timeZoneID) ?? .gmt) }

    /// The window that starts on local day `day`, if the schedule runs that weekday.
    /// Nil as well when DST squeezes the window to nothing (start and end both in one skipped hour).
    func occurrence(startingOn day: Int64, in zone: ZoneClock) -> Occurrence? {
        guard days.contains(.day(number: ZoneClock.weekday(ofDay: day))) else { return nil }
        let startInstant = zone.instant(day: day, minuteOfDay: start.minuteOfDay)
        let endInstant = zone.instant(day: crossesMidnight ? day + 1 : day, minuteOfDay: end.minuteOfDay)
        guard startInstant < endInstant else { return nil }
        return Occurrence(start: startInstant, end: endInstant)
    }

    /// The window containing `t`, whether or not the schedule is enabled.
    public func occurrence(containing t: Instant) -> Occurrence? {
        let zone = zoneClock
        let today = zone.dayNumber(containing: t)
        // A window containing t started today or, crossing midnight, yesterday. Two days back covers
        // a window that began before a DST change made "yesterday" shorter than 24 h.
        for day in [today, today - 1, today - 2] {
            if let o = occurrence(startingOn: day, in: zone), o.contains(t) { return o }
        }
        return nil
    }

    /// Whether the schedule is enabled and one of its windows contains `t`.
    public func isActive(at t: Instant) -> Bool {
        enabled && occurrence(containing: t) != nil
    }

    /// Windows overlapping `[from, to)`, in order. A week and a day of look-ahead is enough for any
    /// question the rules ask (the next edge of a weekly schedule is at most 8 days away).
    public func occurrences(from: Instant, to: Instant) -> [Occurrence] {
        guard from < to else { return [] }
        let zone = zoneClock
        let first = zone.dayNumber(containing: from) - 2
        let last = zone.dayNumber(containing: to)
        var result: [Occurrence] = []
        var day = first
        while day <= last {
            if let o = occurrence(startingOn: day, in: zone), o.end > from, o.start < to { result.append(o) }
            day += 1
        }
        return result
    }

    /// The first window that starts strictly after `t`.
    public func nextOccurrence(after t: Instant) -> Occurrence? {
        occurrences(from: t, to: t + .hours(24 * 9)).first { $0.start > t }
    }

    /// The next instant after `t` at which a window starts or ends: when the schedule's effect changes.
    /// Nil only for a schedule that has no windows at all.
    public func nextEdge(after t: Instant) -> Instant? {
        var best: Instant?
        for o in occurrences(from: t, to: t + .hours(24 * 9)) {
            for edge in [o.start, o.end] where edge > t {
                if best.map({ edge < $0 }) ?? true { best = edge }
            }
        }
        return best
    }
}
