import ControlAPI
import Foundation
import Hummingbird

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
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(kv[0]).removingPercentEncoding ?? String(kv[0])
                let value = kv.count == 2 ? (String(kv[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(kv[1])) : ""
                query[key] = value
            }
        }
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
    public var profile: String { query["profile"].flatMap { $0.isEmpty ? nil : $0 } ?? "default" }

    /// Decodes the JSON body strictly: unknown fields and wrong types are refused with a message
    /// naming the field. An empty body decodes as `{}` so bodies whose fields are all optional
    /// may be left out.
    public func decodeBody<Body: ControlRequestBody>(_ type: Body.Type) throws(ControlFailure) -> Body {
        let bytes = body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) ? Array("{}".utf8) : body
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw .malformedJSON("the body is not valid JSON (\((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "parse error"))")
        }
        guard let fields = object as? [String: Any] else {
            throw .malformedJSON("the body must be a JSON object such as {\"\(Body.fieldNames.first ?? "name")\": ...}")
        }
        let unknown = fields.keys.filter { !Body.fieldNames.contains($0) }.sorted()
        if let first = unknown.first {
            throw .malformedJSON("unknown field '\(first)'; this endpoint takes \(Body.fieldNames.map { "'\($0)'" }.joined(separator: ", "))")
        }
        do {
            return try ControlJSON.decoder().decode(Body.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw .malformedJSON(ControlJSON.describe(error))
        } catch {
            throw .malformedJSON("\(error)")
        }
    }
}

/// What a handler answers: a JSON document, or a stream of newline-delimited JSON lines.
public enum ControlResponse: Sendable {
    case json(status: HTTPResponse.Status, body: Data, headers: [(String, String)])
    case stream(status: HTTPResponse.Status, contentType: String, producer: @Sendable (ControlStreamWriter) async throws -> Void)

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
