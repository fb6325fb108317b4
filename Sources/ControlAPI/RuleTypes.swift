import Foundation
import ScrollOffCore

/// `block` / `unblock`: the entries changed.
public struct BlockResult: Hashable, Sendable, Codable {
    public var entries: [EntryReport]
    public var message: String
    /// The helper's trusted time when it answered (SPEC §11), so the CLI measures "until" and
    /// "today" against the helper's clock rather than its own. Nil from a helper that does not say.
    @WireOptionalTime public var now: Instant?

    public init(entries: [EntryReport], message: String, now: Instant? = nil) {
        self.entries = entries
        self.message = message
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case entries, message, now
    }
}

/// One schedule in `schedule list` (SPEC §2).
public struct ScheduleReport: Hashable, Sendable, Codable {
    public var name: String
    public var from: String
    public var to: String
    /// SPEC §2 bitmask: Sun=1, Mon=2, … Sat=64.
    public var days: Int
    public var daysText: String
    public var timeZone: String
    /// `block`, `curfew` or `strict-curfew`.
    public var kind: String
    public var entries: [String]
    public var reason: String?
    public var enabled: Bool
    @WireOptionalTime public var lockedUntil: Instant?
    /// The helper's trusted time when it answered (SPEC §11), so the CLI measures "until" and
    /// "today" against the helper's clock rather than its own. Nil from a helper that does not say.
    @WireOptionalTime public var now: Instant?

    public init(name: String, from: String, to: String, days: Int, daysText: String, timeZone: String, kind: String,
                entries: [String], reason: String?, enabled: Bool, lockedUntil: Instant?, now: Instant? = nil) {
        self.name = name
        self.from = from
        self.to = to
        self.days = days
        self.daysText = daysText
        self.timeZone = timeZone
        self.kind = kind
        self.entries = entries
        self.reason = reason
        self.enabled = enabled
        self.lockedUntil = lockedUntil
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case name, from, to, days, kind, entries, reason, enabled, now
        case daysText = "days_text"
        case timeZone = "time_zone"
        case lockedUntil = "locked_until"
    }
}

/// `GET /v1/schedules`.
public struct SchedulesResponse: Hashable, Sendable, Codable {
    public var schedules: [ScheduleReport]
    /// The helper's trusted time when it answered (SPEC §11), so the CLI measures "until" and
    /// "today" against the helper's clock rather than its own. Nil from a helper that does not say.
    @WireOptionalTime public var now: Instant?

    public init(schedules: [ScheduleReport], now: Instant? = nil) {
        self.schedules = schedules
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case schedules, now
    }
}

/// A focus session (SPEC §2): a one-off block window from now.
public struct FocusReport: Hashable, Sendable, Codable {
    public var id: Int64
    public var entries: [String]
    @WireTime public var start: Instant
    @WireTime public var end: Instant
    public var reason: String?

    public init(id: Int64, entries: [String], start: Instant, end: Instant, reason: String?) {
        self.id = id
        self.entries = entries
        self.start = start
        self.end = end
        self.reason = reason
    }
}

/// One profile in `profile list` (SPEC §9).
public struct ProfileInfo: Hashable, Sendable, Codable {
    public var name: String
    /// Client networks in CIDR notation; empty for the default profile, which covers the rest.
    public var clients: [String]

    public init(name: String, clients: [String]) {
        self.name = name
        self.clients = clients
    }
}

/// `GET /v1/profiles` and the answer of `POST /v1/profiles`.
public struct ProfilesResponse: Hashable, Sendable, Codable {
    public var profiles: [ProfileInfo]
    /// Where two profiles' clients overlap (a network inside another, one client in two profiles,
    /// MACs beside networks), each with the profile that wins there; absent when none do.
    public var overlaps: [String]?
    public init(profiles: [ProfileInfo], overlaps: [String]? = nil) {
        self.profiles = profiles
        self.overlaps = overlaps
    }
}

/// The answer of commands that change something and have nothing else to report.
public struct DoneResponse: Hashable, Sendable, Codable {
    public var message: String
    public init(message: String) { self.message = message }
}
