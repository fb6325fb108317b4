import ControlAPI
import Foundation
import Hummingbird
import ServiceKit

/// One request to the control API, with who sent it.
public struct ControlRequest: Sendable {
    public var method: HTTPRequest.Method
    /// The path without the query (`/v1/lists/ads`), percent-decoded per segment by the router.
    public var path: String
    public var query: [String: String]
    public var headers: HTTPFields
    public var body: [UInt8]
    /// The process on the other end of the socket (SO_PEERCRED).
    public var caller: CallerIdentity
    /// Values of `{name}` segments of the matched route.
    public var parameters: [String: String] = [:]

    public init(method: HTTPRequest.Method, target: String, headers: HTTPFields, body: [UInt8], caller: CallerIdentity) {
        self.method = method
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = parts.first.map(String.init) ?? "/"
        // The one query parser (ControlAPI), which the fuzz target runs on arbitrary bytes too.
        let query = parts.count == 2 ? URLEncodedFields.parse(parts[1]) : [:]
        self.query = query
        self.headers = headers
        self.body = body
        self.caller = caller
    }

    /// Whether the client asked for a newline-delimited JSON stream.
    public var acceptsNDJSON: Bool {
        headers[values: .accept].contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix(ControlMediaType.ndjson) }
        }
    }

    /// The profile the request acts on (`?profile=`); the default profile when missing.
    public var profile: String { query.nonEmpty(ControlQuery.profile) ?? "default" }

    /// Decodes the JSON body strictly (`ControlBodyDecoding`, shared with the fuzz target): unknown
    /// fields and wrong types are a 400 `malformed_json` naming the field, a number outside its
    /// field's range a 400 `invalid_argument` naming the range.
    public func decodeBody<Body: ControlRequestBody>(_ type: Body.Type) throws(ControlFailure) -> Body {
        do throws(ControlBodyError) {
            return try ControlBodyDecoding.decode(type, from: body)
        } catch {
            throw ControlFailure(error)
        }
    }
}

extension ControlFailure {
    /// The 400 of a body that was not accepted.
    public init(_ error: ControlBodyError) {
        switch error {
        case .malformed(let detail): self = .malformedJSON(detail)
        case .outOfRange(let range): self = .invalidArgument(range.description)
        }
    }

    /// The 400 of a number, id or time outside its range, from a body, a path or a query.
    public init(_ error: WireRangeError) {
        self = .invalidArgument(error.description)
    }
}

/// What a handler answers: a JSON document, or a stream of newline-delimited JSON lines.
public enum ControlResponse: Sendable {
    case json(status: HTTPResponse.Status, body: Data, headers: [(String, String)])
    case stream(status: HTTPResponse.Status, contentType: String, producer: @Sendable (ControlStreamWriter) async throws -> Void)
    /// A body written straight to the connection, waiting whenever the client is slow to read
    /// (the event stream: nothing queues between it and the socket but its own bounded buffer).
    case body(contentType: String, headers: [(String, String)], ResponseBody)

    public static func ok(_ value: some Encodable) -> ControlResponse {
        .json(status: .ok, body: ControlJSON.encode(value), headers: [])
    }

    public static func created(_ value: some Encodable) -> ControlResponse {
        .json(status: .created, body: ControlJSON.encode(value), headers: [])
    }

    public static func failure(_ failure: ControlFailure) -> ControlResponse {
        .json(status: failure.status, body: ControlJSON.encode(ControlErrorEnvelope(error: failure.error)), headers: failure.headers)
    }
}

/// Writes pieces of a streamed answer; each `write` is flushed so the client sees progress at once.
public struct ControlStreamWriter: Sendable {
    let writeBytes: @Sendable (Data) async throws -> Void

    public init(_ writeBytes: @escaping @Sendable (Data) async throws -> Void) {
        self.writeBytes = writeBytes
    }

    /// Writes one value as a JSON line.
    public func writeLine(_ value: some Encodable) async throws {
        var data = ControlJSON.encode(value)
        data.append(0x0A)
        try await writeBytes(data)
    }
}
