import Foundation
import ScrollOffCore

/// Instants written the way a person reads them. Uses Foundation's calendar, independent of the
/// zone arithmetic under test, and only for times that exist exactly once.
enum RulesTime {
    /// `utc("2026-03-29T01:00:00Z")`
    static func utc(_ text: String) -> Instant {
        let f = ISO8601DateFormatter()
        guard let d = f.date(from: text) else { fatalError("bad test timestamp \(text)") }
        return Instant(millisecondsSince1970: Int64(d.timeIntervalSince1970 * 1000))
    }

    /// `local("2026-11-23 01:30", "Europe/Berlin")` for an unambiguous wall time.
    static func local(_ text: String, _ zone: String) -> Instant {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm"
        f.timeZone = TimeZone(identifier: zone)
        guard let d = f.date(from: text) else { fatalError("bad test wall time \(text) in \(zone)") }
        return Instant(millisecondsSince1970: Int64(d.timeIntervalSince1970 * 1000))
    }

    static func time(_ text: String) -> LocalTime {
        guard let t = try? LocalTime.parse(text) else { fatalError("bad test time \(text)") }
        return t
    }

    static func schedule(
        _ from: String, _ to: String, days: Weekdays = .daily, zone: String = "Europe/Berlin",
        entries: Set<EntryID> = ["instagram"], kind: Schedule.Kind = .block, name: String = "night",
        reason: String? = nil, cooldownUntil: Instant? = nil
    ) -> Schedule {
        Schedule(
            name: name, start: time(from), end: time(to), days: days, timeZoneID: zone, entries: entries,
            kind: kind, reason: reason, cooldownUntil: cooldownUntil
        )
    }
}
