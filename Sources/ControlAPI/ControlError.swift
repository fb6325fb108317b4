import Foundation

/// The body of every error answer of the control API:
/// `{ "error": { "code": "...", "message": "...", "rule": null, "opens_at": null } }`.
///
/// `rule` and `opens_at` are always present (null when they do not apply) so scripts can read a
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

    public init(code: String, message: String, rule: String? = nil, opensAt: Date? = nil) {
        self.code = code
        self.message = message
        self.rule = rule
        self.opensAt = opensAt
    }

    enum CodingKeys: String, CodingKey {
        case code, message, rule
        case opensAt = "opens_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
        // Explicit nulls keep the documented shape stable for scripts.
        try container.encode(rule, forKey: .rule)
        try container.encode(opensAt, forKey: .opensAt)
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
    public static let malformedJSON = "malformed_json"
    public static let invalidArgument = "invalid_argument"
    public static let notFound = "not_found"
    public static let methodNotAllowed = "method_not_allowed"
    public static let payloadTooLarge = "payload_too_large"
    public static let unsupportedMediaType = "unsupported_media_type"
    public static let forbidden = "forbidden"
    public static let profileNotFound = "profile_not_found"
    public static let listExists = "list_exists"
    public static let listNotFound = "list_not_found"
    public static let fetchFailed = "fetch_failed"
    public static let internalError = "internal"
}
