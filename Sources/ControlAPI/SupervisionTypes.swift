import Foundation
import ScrollOffCore

// Pause (SPEC §5a) and daily allowances (SPEC §4a): an owner's tools over someone else's devices.

/// `pause`: 1 s to 7 days (`Pause.longest`), like a focus session.
public enum PauseBounds: SecondsBounds {
    public static let range: ClosedRange<Int64> = 1...Pause.longest.wholeSeconds
    public static let words = "(1 s to 7 days)"
    public static let hint = "Send the length in seconds, such as 2700 for 45 min, or an end with `until`."
}
public typealias PauseSeconds = BoundedSeconds<PauseBounds>

/// `allowance set`: 1 s to a day (`Allowance.longest`) per day.
public enum AllowanceBounds: SecondsBounds {
    public static let range: ClosedRange<Int64> = 1...Allowance.longest.wholeSeconds
    public static let words = "(1 s to a day)"
    public static let hint = "Send the daily time in seconds, such as 3600 for 1 h; `allowance clear` removes one."
}
public typealias AllowanceSeconds = BoundedSeconds<AllowanceBounds>

/// `POST /v1/pause`: a length or an end (a local time of day in the profile's zone), not both.
public struct PauseRequest: ControlRequestBody, Hashable {
    public var seconds: PauseSeconds?
    /// `HH:MM` or `9:30 pm`: the next time the profile's wall clock reads it.
    public var until: String?
    public var reason: String?

    public static let fieldNames = ["seconds", "until", "reason"]

    public init(seconds: PauseSeconds? = nil, until: String? = nil, reason: String? = nil) {
        self.seconds = seconds
        self.until = until
        self.reason = reason
    }
}

/// `pause`, `resume` and the page's buttons: the pause in force after the command.
public struct PauseReport: Hashable, Sendable, Codable {
    public var profile: String
    /// Null when the profile is not paused.
    @WireOptionalTime public var pausedUntil: Instant?
    public var reason: String?
    public var pausedBy: String?
    public var message: String
    @WireTime public var now: Instant

    public init(profile: String, pausedUntil: Instant?, reason: String?, pausedBy: String?, message: String, now: Instant) {
        self.profile = profile
        self.pausedUntil = pausedUntil
        self.reason = reason
        self.pausedBy = pausedBy
        self.message = message
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case profile, reason, message, now
        case pausedUntil = "paused_until"
        case pausedBy = "paused_by"
    }
}

/// `POST /v1/allowances`: `seconds` a day on `days` (`daily`, `weekdays`, `weekends`, `mon,tue`;
/// every day when absent) for `entries` (empty = any entry).
public struct AllowanceRequest: ControlRequestBody, Hashable {
    public var seconds: AllowanceSeconds
    public var entries: [String]
    public var days: String?

    public static let fieldNames = ["seconds", "entries", "days"]

    public init(seconds: AllowanceSeconds, entries: [String] = [], days: String? = nil) {
        self.seconds = seconds
        self.entries = entries
        self.days = days
    }
}

/// `POST /v1/allowances/clear`: removes the allowance for `entries` on `days` (every day when absent).
public struct AllowanceClearRequest: ControlRequestBody, Hashable {
    public var entries: [String]
    public var days: String?

    public static let fieldNames = ["entries", "days"]

    public init(entries: [String] = [], days: String? = nil) {
        self.entries = entries
        self.days = days
    }
}

/// One daily allowance as `allowance list`, `status` and `wallet` show it.
public struct AllowanceInfo: Hashable, Sendable, Codable {
    /// Empty: any entry.
    public var entries: [String]
    /// Seconds per weekday, Sunday first.
    public var secondsByWeekday: [Int64]
    /// "1 h on weekdays, 2 h at weekends for youtube".
    public var words: String
    public var todaySeconds: Int64
    /// What is left of it today; null when it gives nothing today.
    public var allowanceLeftSeconds: Int64?
    /// Until when raising it is refused (its cooldown, a lock of an entry it covers).
    @WireOptionalTime public var lockedUntil: Instant?

    public init(entries: [String], secondsByWeekday: [Int64], words: String, todaySeconds: Int64, allowanceLeftSeconds: Int64?, lockedUntil: Instant?) {
        self.entries = entries
        self.secondsByWeekday = secondsByWeekday
        self.words = words
        self.todaySeconds = todaySeconds
        self.allowanceLeftSeconds = allowanceLeftSeconds
        self.lockedUntil = lockedUntil
    }

    enum CodingKeys: String, CodingKey {
        case entries, words
        case secondsByWeekday = "seconds_by_weekday"
        case todaySeconds = "today_seconds"
        case allowanceLeftSeconds = "allowance_left_seconds"
        case lockedUntil = "locked_until"
    }
}

/// `allowance set|clear|list`.
public struct AllowancesReport: Hashable, Sendable, Codable {
    public var profile: String
    public var allowances: [AllowanceInfo]
    public var message: String
    @WireTime public var now: Instant

    public init(profile: String, allowances: [AllowanceInfo], message: String, now: Instant) {
        self.profile = profile
        self.allowances = allowances
        self.message = message
        self.now = now
    }
}
