import ControlAPI
import Foundation
import NIOHTTP1

/// A small blocking HTTP/1.1 client for the helper's control socket (one request per connection),
/// calling the endpoints of the route table (`ControlEndpoints`).
///
/// The CLI makes one call and exits, so blocking I/O with timeouts is the simplest correct shape:
/// no event loop to start, nothing to tear down. The HTTP itself (encoding the request, parsing
/// the answer) is SwiftNIO's (`HTTPCodec`).
public struct ControlClient: Sendable {
    public var socketPath: String
    /// Longest wait for any single read or write.
    public var timeoutSeconds: Double
    /// Sent as `?profile=` on every request; nil means the default profile.
    public var profile: String?

    public init(socketPath: String, timeoutSeconds: Double = 15, profile: String? = nil) {
        self.socketPath = socketPath
        self.timeoutSeconds = timeoutSeconds
        self.profile = profile
    }

    /// A complete answer.
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    /// Calls an endpoint of the route table with a body and decodes its JSON answer; an error
    /// body becomes `.refused`. `parameter` fills the template's `{…}` segment.
    public func call<Body: Encodable, Answer: Decodable>(
        _ endpoint: ControlEndpoint<Body, Answer>, _ body: Body, parameter: String? = nil, query: [(ControlQueryKey, String?)] = [],
        timeoutSeconds: Double? = nil
    ) throws(ControlClientError) -> Answer {
        let response = try send(
            method: endpoint.method.rawValue, path: endpoint.target(parameter, query: query),
            body: [UInt8](ControlJSON.encode(body)), timeoutSeconds: timeoutSeconds)
        return try decodeAnswer(Answer.self, response)
    }

    /// Calls an endpoint that takes no body.
    public func call<Answer: Decodable>(
        _ endpoint: ControlEndpoint<NoBody, Answer>, parameter: String? = nil, query: [(ControlQueryKey, String?)] = [],
        timeoutSeconds: Double? = nil
    ) throws(ControlClientError) -> Answer {
        let response = try send(method: endpoint.method.rawValue, path: endpoint.target(parameter, query: query), body: nil, timeoutSeconds: timeoutSeconds)
        return try decodeAnswer(Answer.self, response)
    }

    /// Fetches a text answer (`GET /v1/export`).
    public func call(
        _ endpoint: ControlEndpoint<NoBody, CSVText>, timeoutSeconds: Double? = nil
    ) throws(ControlClientError) -> CSVText {
        let response = try send(
            method: endpoint.method.rawValue, path: endpoint.target(), accept: "text/csv", timeoutSeconds: timeoutSeconds)
        guard (200...299).contains(response.status) else { throw refusal(status: response.status, body: response.body) }
        return CSVText(text: String(decoding: response.body, as: UTF8.self))
    }

    /// Sends one request and reads the whole answer.
    func send(
        method: String, path: String, body: [UInt8]? = nil, accept: String = ControlMediaType.json,
        timeoutSeconds: Double? = nil
    ) throws(ControlClientError) -> Response {
        var collected: [UInt8] = []
        let head = try exchange(method: method, path: path, body: body, accept: accept, timeoutSeconds: timeoutSeconds) { chunk in
            collected.append(contentsOf: chunk)
        }
        return Response(status: head, body: collected)
    }

    /// Decodes a success body, or throws the helper's error body.
    func decodeAnswer<Answer: Decodable>(_ type: Answer.Type, _ response: Response) throws(ControlClientError) -> Answer {
        guard (200...299).contains(response.status) else { throw refusal(status: response.status, body: response.body) }
        do {
            return try ControlJSON.decoder().decode(type, from: Data(response.body))
        } catch {
            throw .badAnswer(path: socketPath, detail: "HTTP \(response.status) body: \(error)")
        }
    }

    /// Sends a request asking for `application/x-ndjson` and hands each complete line to
    /// `onLine` as it arrives, so a long refresh can show progress. An error answer (any non-2xx)
    /// is thrown as `.refused` instead.
    public func streamLines<Body: Encodable, Answer>(
        _ endpoint: ControlEndpoint<Body, Answer>, _ body: Body, timeoutSeconds: Double? = nil,
        onLine: ([UInt8]) -> Void
    ) throws(ControlClientError) {
        try streamLines(
            method: endpoint.method.rawValue, path: endpoint.target(), body: [UInt8](ControlJSON.encode(body)),
            timeoutSeconds: timeoutSeconds, onLine: onLine)
    }

    func streamLines(
        method: String, path: String, body: [UInt8]?, timeoutSeconds: Double? = nil,
        onLine: ([UInt8]) -> Void
    ) throws(ControlClientError) {
        var pending: [UInt8] = []
        var errorBody: [UInt8] = []
        var streaming = false
        let status = try exchange(
            method: method, path: path, body: body, accept: ControlMediaType.ndjson, timeoutSeconds: timeoutSeconds,
            onHead: { status in streaming = (200...299).contains(status) }
        ) { chunk in
            guard streaming else {
                errorBody.append(contentsOf: chunk)
                return
            }
            pending.append(contentsOf: chunk)
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                if !line.isEmpty { onLine(line) }
            }
        }
        guard (200...299).contains(status) else { throw refusal(status: status, body: errorBody) }
        if !pending.isEmpty { onLine(pending) }
    }

    /// Follows a Server-Sent Events endpoint (`GET /v1/events/stream`): `onEvent` gets each message
    /// as it arrives, with the stream's cursor (`ServerSentEventParser.lastEventID`), until the
    /// helper ends the stream (it stopped, or let a slow reader go). `after` resumes after that
    /// event id. Reads wait at most `timeoutSeconds` (more than the heartbeat's interval), so a
    /// helper that went silent is noticed; an error answer is thrown as `.refused`.
    public func followEvents(
        _ endpoint: ControlEndpoint<NoBody, ServerSentEvents>, after: Int64?, timeoutSeconds: Double,
        onEvent: (ServerSentEvent, _ cursor: String?) -> Void
    ) throws(ControlClientError) {
        var parser = ServerSentEventParser()
        var errorBody: [UInt8] = []
        var streaming = false
        let status = try exchange(
            method: endpoint.method.rawValue, path: endpoint.target(query: [(ControlQuery.after, after.map { "\($0)" })]), body: nil,
            accept: EventStream.mediaType, timeoutSeconds: timeoutSeconds, limit: nil,
            onHead: { status in streaming = (200...299).contains(status) }
        ) { chunk in
            guard streaming else {
                errorBody.append(contentsOf: chunk)
                return
            }
            let before = parser.lastEventID
            let events = parser.feed(chunk)
            for event in events { onEvent(event, event.id) }
            if events.isEmpty, parser.lastEventID != before { onEvent(ServerSentEvent(id: parser.lastEventID, event: "", data: ""), parser.lastEventID) }
        }
        guard (200...299).contains(status) else { throw refusal(status: status, body: errorBody) }
    }

    private func refusal(status: Int, body: [UInt8]) -> ControlClientError {
        if let envelope = try? ControlJSON.decoder().decode(ControlErrorEnvelope.self, from: Data(body)) {
            return .refused(status: status, error: envelope.error)
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return .badAnswer(path: socketPath, detail: "HTTP \(status) without an error body: \(text)")
    }

    /// The longest answer the CLI reads; the largest (an export) is far below it.
    static let maxAnswerBytes = 64 * 1024 * 1024

    /// Sends the request and hands the answer's body to `onBody` as it arrives; returns the status.
    private func exchange(
        method: String, path: String, body: [UInt8]?, accept: String, timeoutSeconds: Double?, limit: Int? = Self.maxAnswerBytes,
        onHead: (Int) -> Void = { _ in }, onBody: ([UInt8]) -> Void
    ) throws(ControlClientError) -> Int {
        let timeout = timeoutSeconds ?? self.timeoutSeconds
        let connection = try UnixSocketConnection(path: socketPath, timeoutSeconds: timeout)
        var status: Int?
        var received = 0
        do {
            let codec = try HTTPCodec()
            try connection.writeAll(try requestBytes(method: method, path: path, body: body, accept: accept, codec: codec), timeoutSeconds: timeout)
            var anyBytes = false
            while true {
                let bytes = try connection.readSome(timeoutSeconds: timeout)
                let parts: [HTTPCodec.Part]
                if bytes.isEmpty {
                    // Not a byte of an answer: closed at once, not a garbled answer of another version.
                    if !anyBytes { throw ControlClientError.badAnswer(path: socketPath, detail: ControlClientError.closedBeforeAnswer) }
                    parts = try codec.finish()
                } else {
                    anyBytes = true
                    parts = try codec.feed(bytes)
                }
                for part in parts {
                    switch part {
                    case .head(let code):
                        status = code
                        onHead(code)
                    case .body(let chunk):
                        received += chunk.count
                        if let limit, received > limit {
                            throw ControlClientError.badAnswer(path: socketPath, detail: "the helper's answer is too large (body over \(limit) bytes)")
                        }
                        onBody(chunk)
                    case .end:
                        if let status { return status }
                    }
                }
                if bytes.isEmpty {
                    throw ControlClientError.badAnswer(path: socketPath, detail: "the helper closed the connection mid-answer")
                }
            }
        } catch let error as ControlClientError {
            throw error
        } catch let error as HTTPParserError {
            if status == nil, case .invalidEOFState = error {
                throw .badAnswer(path: socketPath, detail: "the helper closed the connection mid-answer (inside the header section)")
            }
            let state = status == nil ? "" : " mid-answer"
            throw .badAnswer(path: socketPath, detail: "the helper's answer is not valid HTTP\(state) (\(error))")
        } catch {
            throw .badAnswer(path: socketPath, detail: "\(error)")
        }
    }

    /// The request on the wire: `Connection: close`, since the CLI makes one call per connection.
    func requestBytes(method: String, path: String, body: [UInt8]?, accept: String, codec: HTTPCodec? = nil) throws -> [UInt8] {
        var target = path
        if let profile {
            target = ControlQuery.appending(ControlQuery.profile, profile, to: target)
        }
        var headers = [("Host", "scrolloff"), ("Accept", accept), ("Connection", "close"), ("User-Agent", "scrolloff-cli")]
        if let body { headers += [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")] }
        return try (codec ?? HTTPCodec()).encode(method: method, target: target, headers: headers, body: body)
    }
}
