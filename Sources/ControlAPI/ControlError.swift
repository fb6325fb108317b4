import Foundation

/// The body of every error answer of the control API:
/// `{ "error": { "code": "...", "message": "...", "rule": null, "opens_at": null, "reason": null } }`.
///
/// `rule`, `opens_at` and `reason` are always present (null when they do not apply) so scripts can read a
/// refusal's rule and the instant it lifts without guessing at the shape (SPEC §13: a refusal says
/// which rule and until when).
public struct ControlError: Codable, Sendable, Equatable, Error, CustomStringConvertible {
    /// A stable identifier for scripts (`list_not_found`), never reworded.
    public var code: String
    /// One or two sentences for a person: what happened and what to do.
    public var message: String
    /// The rule that refused the request (`cooldown`, `curfew`, …), when a rule did.
    public var rule: String?
    /// When that rule stops refusing.
    public var opensAt: Date?
    /// The helper's trusted time when it refused, so the CLI says "1 h 12 min" from the helper's
    /// clock, not its own; written only on refusals.
    public var now: Date?
    /// What the rule is about (an entry, a schedule's name); written only on refusals.
    public var subject: String?
    /// The person's own reason for the rule (SPEC §3: shown back when they try to undo it).
    public var reason: String?

    public init(code: String, message: String, rule: String? = nil, opensAt: Date? = nil, reason: String? = nil, subject: String? = nil) {
        self.subject = subject
        self.code = code
        self.message = message
        self.rule = rule
        self.opensAt = opensAt
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case code, message, rule, reason, subject, now
        case opensAt = "opens_at"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(String.self, forKey: .code)
        message = try container.decode(String.self, forKey: .message)
        rule = try container.decodeIfPresent(String.self, forKey: .rule)
        opensAt = try container.decodeIfPresent(Date.self, forKey: .opensAt)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        subject = try container.decodeIfPresent(String.self, forKey: .subject)
        now = try container.decodeIfPresent(Date.self, forKey: .now)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
        // Explicit nulls keep the documented shape stable for scripts.
        try container.encode(rule, forKey: .rule)
        try container.encode(opensAt, forKey: .opensAt)
        try container.encode(reason, forKey: .reason)
        try container.encodeIfPresent(subject, forKey: .subject)
        try container.encodeIfPresent(now, forKey: .now)
    }

    public var description: String { message }
}

/// `{ "error": ControlError }`.
public struct ControlErrorEnvelope: Codable, Sendable, Equatable {
    public var error: ControlError
    public init(error: ControlError) { self.error = error }
}

/// The error codes the helper sends. Strings, not an enum on the wire, so an older CLI can still
/// print the message of a code it does not know.
public enum ControlErrorCode {
    public static let malformedHTTP = "malformed_http"
    /// A request using what the server does not implement, such as a transfer coding other than chunked (501).
    public static let notImplemented = "not_implemented"
    public static let malformedJSON = "malformed_json"
    public static let invalidArgument = "invalid_argument"
    public static let notFound = "not_found"
    public static let methodNotAllowed = "method_not_allowed"
    public static let payloadTooLarge = "payload_too_large"
    public static let unsupportedMediaType = "unsupported_media_type"
    /// 406: the event stream is asked for without `Accept: text/event-stream`.
    public static let notAcceptable = "not_acceptable"
    public static let forbidden = "forbidden"
    public static let profileNotFound = "profile_not_found"
    public static let listExists = "list_exists"
    public static let listNotFound = "list_not_found"
    public static let fetchFailed = "fetch_failed"
    public static let internalError = "internal"
    /// A rule refused the request (SPEC §13 exit code 1); `rule` and `opens_at` say which and until when.
    public static let refused = "refused"
    /// The request names an entry, schedule, plan or exercise that does not exist (exit code 2).
    public static let unknownName = "unknown_name"
    /// The helper's database refused the change; nothing was changed.
    public static let storage = "storage"
}
