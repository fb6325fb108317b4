import Foundation

/// One configured list source as `GET /v1/lists` reports it.
public struct ListInfo: Codable, Sendable, Equatable {
    /// `fresh`, `failing`, `stale` or `never_fetched` (see `ListState`).
    public var state: String
    public var name: String
    public var url: String
    /// Whether a good copy is in force (it stays in force while refreshes fail).
    public var servingCopy: Bool
    public var entryCount: Int?
    public var sizeBytes: Int64?
    public var badLineCount: Int?
    public var badLines: [BadLineInfo]
    public var lastSuccess: Date?
    public var lastAttempt: Date?
    public var lastChanged: Date?
    public var nextRefresh: Date?
    /// Why the last refresh failed, in words; nil after a success.
    public var lastError: String?
    public var lastErrorCode: String?
    public var consecutiveFailures: Int
    /// The configuration file that names this list (`[[lists.source]]`); nil for a list added with
    /// `scrolloff lists add`. Such a list is changed or removed in the file, not with the CLI.
    public var definedIn: String?
    /// Names a refresh dropped while a rule held the list (a block's cooldown, a curfew): they
    /// stay blocked until the lock ends, then go by themselves (SPEC §3). Nil: none held.
    public var held: HeldNamesInfo?

    public init(
        state: String, name: String, url: String, servingCopy: Bool, entryCount: Int? = nil, sizeBytes: Int64? = nil,
        badLineCount: Int? = nil, badLines: [BadLineInfo] = [], lastSuccess: Date? = nil, lastAttempt: Date? = nil,
        lastChanged: Date? = nil, nextRefresh: Date? = nil, lastError: String? = nil, lastErrorCode: String? = nil,
        consecutiveFailures: Int = 0, definedIn: String? = nil, held: HeldNamesInfo? = nil
    ) {
        self.state = state
        self.name = name
        self.url = url
        self.servingCopy = servingCopy
        self.entryCount = entryCount
        self.sizeBytes = sizeBytes
        self.badLineCount = badLineCount
        self.badLines = badLines
        self.lastSuccess = lastSuccess
        self.lastAttempt = lastAttempt
        self.lastChanged = lastChanged
        self.nextRefresh = nextRefresh
        self.lastError = lastError
        self.lastErrorCode = lastErrorCode
        self.consecutiveFailures = consecutiveFailures
        self.definedIn = definedIn
        self.held = held
    }

    enum CodingKeys: String, CodingKey {
        case state, name, url
        case servingCopy = "serving_copy"
        case entryCount = "entry_count"
        case sizeBytes = "size_bytes"
        case badLineCount = "bad_line_count"
        case badLines = "bad_lines"
        case lastSuccess = "last_success"
        case lastAttempt = "last_attempt"
        case lastChanged = "last_changed"
        case nextRefresh = "next_refresh"
        case lastError = "last_error"
        case lastErrorCode = "last_error_code"
        case consecutiveFailures = "consecutive_failures"
        case definedIn = "defined_in"
        case held
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        // Every key is written, null when unknown, so `--json` consumers see one stable shape.
        try c.encode(state, forKey: .state)
        try c.encode(name, forKey: .name)
        try c.encode(url, forKey: .url)
        try c.encode(servingCopy, forKey: .servingCopy)
        try c.encode(entryCount, forKey: .entryCount)
        try c.encode(sizeBytes, forKey: .sizeBytes)
        try c.encode(badLineCount, forKey: .badLineCount)
        try c.encode(badLines, forKey: .badLines)
        try c.encode(lastSuccess, forKey: .lastSuccess)
        try c.encode(lastAttempt, forKey: .lastAttempt)
        try c.encode(lastChanged, forKey: .lastChanged)
        try c.encode(nextRefresh, forKey: .nextRefresh)
        try c.encode(lastError, forKey: .lastError)
        try c.encode(lastErrorCode, forKey: .lastErrorCode)
        try c.encode(consecutiveFailures, forKey: .consecutiveFailures)
        try c.encode(definedIn, forKey: .definedIn)
        try c.encode(held, forKey: .held)
    }
}

/// `ListInfo.held`: how many names a lock keeps in force and until when.
public struct HeldNamesInfo: Codable, Sendable, Equatable {
    /// Rules the last refreshes dropped that stay in force.
    public var count: Int
    /// When the lock ends and they go; nil when waiting alone will not open it.
    public var until: Date?
    /// The rule's words (which rule, whose reason).
    public var reason: String
    public var since: Date

    public init(count: Int, until: Date?, reason: String, since: Date) {
        self.count = count
        self.until = until
        self.reason = reason
        self.since = since
    }

    enum CodingKeys: String, CodingKey {
        case count, until, reason, since
    }
}

/// The `state` values of `ListInfo`.
public enum ListState {
    public static let fresh = "fresh"
    public static let failing = "failing"
    public static let stale = "stale"
    public static let neverFetched = "never_fetched"
}

/// A line of a list that the parser could not use, with its 1-based number.
public struct BadLineInfo: Codable, Sendable, Equatable {
    public var lineNumber: Int
    public var text: String
    public var reason: String

    public init(lineNumber: Int, text: String, reason: String) {
        self.lineNumber = lineNumber
        self.text = text
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case lineNumber = "line_number"
        case text, reason
    }
}

/// `GET /v1/lists`.
public struct ListsResponse: Codable, Sendable, Equatable {
    /// The helper's trusted clock at the time of the answer.
    public var now: Date
    public var lists: [ListInfo]
    public init(now: Date, lists: [ListInfo]) {
        self.now = now
        self.lists = lists
    }
}

/// `POST /v1/lists`: add a list from a URL (http, https or file).
public struct AddListRequest: ControlRequestBody, Equatable {
    public var url: String
    /// Derived from the URL's host (or file name) when missing.
    public var name: String?
    public init(url: String, name: String? = nil) {
        self.url = url
        self.name = name
    }
    public static let fieldNames = ["url", "name"]
}

/// `POST /v1/lists/update`: refresh one list, or all of them when `name` is missing.
public struct UpdateListsRequest: ControlRequestBody, Equatable {
    public var name: String?
    public init(name: String? = nil) { self.name = name }
    public static let fieldNames = ["name"]
}

/// What one refresh did.
public struct RefreshResult: Codable, Sendable, Equatable {
    /// `updated`, `unchanged` or `failed` (see `RefreshOutcome`).
    public var outcome: String
    public var name: String
    /// Present when the refresh failed: the old copy, if any, stays in force.
    public var error: ControlError?
    public var list: ListInfo

    public init(outcome: String, name: String, error: ControlError? = nil, list: ListInfo) {
        self.outcome = outcome
        self.name = name
        self.error = error
        self.list = list
    }
}

/// The `outcome` values of `RefreshResult`.
public enum RefreshOutcome {
    public static let updated = "updated"
    public static let unchanged = "unchanged"
    public static let failed = "failed"
}

/// `POST /v1/lists` answer: the new list after its first download.
public struct AddListResponse: Codable, Sendable, Equatable {
    public var now: Date
    public var result: RefreshResult
    public init(now: Date, result: RefreshResult) {
        self.now = now
        self.result = result
    }
}

/// `POST /v1/lists/update` answer without streaming.
public struct UpdateListsResponse: Codable, Sendable, Equatable {
    public var now: Date
    public var results: [RefreshResult]
    public init(now: Date, results: [RefreshResult]) {
        self.now = now
        self.results = results
    }
}

/// `DELETE /v1/lists/{name}` answer.
public struct RemoveListResponse: Codable, Sendable, Equatable {
    public var removed: String
    public init(removed: String) { self.removed = removed }
}

/// One line of the `application/x-ndjson` stream of `POST /v1/lists/update`.
///
/// `event` is `progress` (bytes of one download so far), `result` (one list finished), `done`
/// (the last line, with the totals) or `error` (the request failed as a whole). Only the fields of
/// that event are present.
public struct UpdateStreamLine: Codable, Sendable, Equatable {
    public var event: String
    public var name: String?
    public var receivedBytes: Int64?
    public var expectedBytes: Int64?
    public var result: RefreshResult?
    public var now: Date?
    public var updated: Int?
    public var unchanged: Int?
    public var failed: Int?
    public var error: ControlError?
    /// `retry`: the attempt that failed, why, and the seconds until the next one.
    public var attempt: Int?
    public var message: String?
    public var retryInSeconds: Int64?
    /// `error` of `lists add`: the HTTP status the answer would have had unstreamed.
    public var status: Int?

    public init(
        event: String, name: String? = nil, receivedBytes: Int64? = nil, expectedBytes: Int64? = nil,
        result: RefreshResult? = nil, now: Date? = nil, updated: Int? = nil, unchanged: Int? = nil, failed: Int? = nil,
        error: ControlError? = nil, attempt: Int? = nil, message: String? = nil, retryInSeconds: Int64? = nil, status: Int? = nil
    ) {
        self.status = status
        self.attempt = attempt
        self.message = message
        self.retryInSeconds = retryInSeconds
        self.event = event
        self.name = name
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.result = result
        self.now = now
        self.updated = updated
        self.unchanged = unchanged
        self.failed = failed
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case event, name, result, now, updated, unchanged, failed, error, attempt, message, status
        case receivedBytes = "received_bytes"
        case expectedBytes = "expected_bytes"
        case retryInSeconds = "retry_in_seconds"
    }

    public static let progress = "progress"
    /// An attempt failed and another follows (`lists add`).
    public static let retry = "retry"
    public static let resultEvent = "result"
    public static let done = "done"
    public static let errorEvent = "error"
}

/// Media types of the control API.
public enum ControlMediaType {
    public static let json = "application/json"
    public static let ndjson = "application/x-ndjson"
}
