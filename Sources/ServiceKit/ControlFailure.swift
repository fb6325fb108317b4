import ControlAPI
import Hummingbird

/// A request the helper answers with an error: the HTTP status and the JSON error body. Handlers
/// throw it; the router turns it into the response, so every error has the same shape.
public struct ControlFailure: Error, Sendable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var error: ControlError
    /// Extra header fields, such as `Allow` on a 405.
    public var headers: [(String, String)]

    public init(status: HTTPResponse.Status, code: String, message: String, headers: [(String, String)] = []) {
        self.status = status
        self.error = ControlError(code: code, message: message)
        self.headers = headers
    }

    public var description: String { "\(status.code) \(error.code): \(error.message)" }

    public static func invalidArgument(_ message: String) -> ControlFailure {
        ControlFailure(status: .badRequest, code: ControlErrorCode.invalidArgument, message: message)
    }

    public static func malformedJSON(_ detail: String) -> ControlFailure {
        ControlFailure(status: .badRequest, code: ControlErrorCode.malformedJSON, message: "The request body was not accepted: \(detail).")
    }

    public static func notFound(path: String) -> ControlFailure {
        ControlFailure(
            status: .notFound, code: ControlErrorCode.notFound,
            message: "There is no endpoint \(path). The API lives under /v1/ (try GET /v1/health)."
        )
    }

    public static func methodNotAllowed(_ method: String, path: String, allowed: [String]) -> ControlFailure {
        let list = allowed.joined(separator: ", ")
        return ControlFailure(
            status: .methodNotAllowed, code: ControlErrorCode.methodNotAllowed,
            message: "\(path) does not accept \(method); it accepts \(list).", headers: [("Allow", list)]
        )
    }

    public static func payloadTooLarge(limit: Int) -> ControlFailure {
        ControlFailure(
            status: .contentTooLarge, code: ControlErrorCode.payloadTooLarge,
            message: "The request body is larger than the \(limit / 1024) KiB the control API accepts."
        )
    }

    public static func forbidden(_ reason: String) -> ControlFailure {
        ControlFailure(status: .forbidden, code: ControlErrorCode.forbidden, message: reason)
    }

    public static func internalError(_ detail: String) -> ControlFailure {
        ControlFailure(
            status: .internalServerError, code: ControlErrorCode.internalError,
            message: "The helper failed while answering (\(detail)). Its log has the details; please report it."
        )
    }
}
