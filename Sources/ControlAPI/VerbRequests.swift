import Foundation
import ScrollOffCore

// Request bodies of the `/v1` verb endpoints. Each lists its wire keys (`fieldNames`) so the
// helper refuses a misspelled field instead of ignoring it.

/// `POST /v1/block` and `POST /v1/unblock`: service ids, categories or domains (SPEC §1).
public struct EntriesRequest: ControlRequestBody, Hashable {
    public var entries: [String]
    /// Why, in the person's words (SPEC §3: shown back when they try to undo it). Block only.
    public var reason: String?

    public static let fieldNames = ["entries", "reason"]

    public init(entries: [String], reason: String? = nil) {
        self.entries = entries
        self.reason = reason
    }
}

/// `schedule add` as the control API receives it (SPEC §13); the engine parses and validates it.
public struct ScheduleRequest: ControlRequestBody, Hashable {
    public var name: String
    /// `HH:MM`.
    public var from: String
    public var to: String
    /// `daily`, `weekdays`, `weekends` or `mon,tue,…`.
    public var days: String
    public var curfew: Bool
    public var strict: Bool
    /// Service ids, categories or domains.
    public var entries: [String]
    public var reason: String?

    public static let fieldNames = ["name", "from", "to", "days", "curfew", "strict", "entries", "reason"]

    public init(name: String, from: String, to: String, days: String = "daily", curfew: Bool = false, strict: Bool = false,
                entries: [String], reason: String? = nil) {
        self.name = name
        self.from = from
        self.to = to
        self.days = days
        self.curfew = curfew
        self.strict = strict
        self.entries = entries
        self.reason = reason
    }
}

/// `POST /v1/focus` (SPEC §2).
public struct FocusRequest: ControlRequestBody, Hashable {
    /// 1 s to 7 days (`FocusBounds`).
    public var seconds: FocusSeconds
    /// Empty: every entry the profile names.
    public var entries: [String]
    public var reason: String?

    public static let fieldNames = ["seconds", "entries", "reason"]

    public init(seconds: FocusSeconds, entries: [String] = [], reason: String? = nil) {
        self.seconds = seconds
        self.entries = entries
        self.reason = reason
    }
}

/// `POST /v1/use`, `/v1/peek`, `/v1/token` (SPEC §4, §5) and `/v1/stop` (entry optional there).
public struct GrantRequest: ControlRequestBody, Hashable {
    public var entry: String?
    /// `use --for`: the longest the spend may run, 1 s to a day (`SpendLimitBounds`); nil = until
    /// stopped or the credit runs out.
    public var forSeconds: SpendLimitSeconds?
    /// The stated task (SPEC §5), shown back while the grant runs.
    public var task: String?

    public static let fieldNames = ["entry", "for_seconds", "task"]

    public init(entry: String?, forSeconds: SpendLimitSeconds? = nil, task: String? = nil) {
        self.entry = entry
        self.forSeconds = forSeconds
        self.task = task
    }

    enum CodingKeys: String, CodingKey {
        case entry, task
        case forSeconds = "for_seconds"
    }
}

/// `POST /v1/exercises`: how an offered exercise went (SPEC §5 step 3).
public struct ExerciseOutcomeRequest: ControlRequestBody, Hashable {
    /// An id of `Exercise.catalogue`.
    public var exercise: String
    public var entry: String
    /// `completed`, `skipped` or `bypassAvoided` (`ExerciseRecord.Outcome`).
    public var outcome: String

    public static let fieldNames = ["exercise", "entry", "outcome"]

    public init(exercise: String, entry: String, outcome: String) {
        self.exercise = exercise
        self.entry = entry
        self.outcome = outcome
    }
}

/// `POST /v1/plans` (SPEC §8).
public struct PlanRequest: ControlRequestBody, Hashable {
    public var when: String
    public var then: String

    public static let fieldNames = ["when", "then"]

    public init(when: String, then: String) {
        self.when = when
        self.then = then
    }
}

/// `POST /v1/alternatives` (SPEC §8).
public struct AlternativeRequest: ControlRequestBody, Hashable {
    public var text: String

    public static let fieldNames = ["text"]

    public init(text: String) { self.text = text }
}

/// `POST /v1/profiles` (SPEC §9).
public struct ProfileRequest: ControlRequestBody, Hashable {
    public var name: String
    public var clients: [String]

    public static let fieldNames = ["name", "clients"]

    public init(name: String, clients: [String]) {
        self.name = name
        self.clients = clients
    }
}
