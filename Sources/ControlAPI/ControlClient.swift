import Foundation

/// A small blocking HTTP/1.1 client for the helper's control socket (one request per connection).
///
/// The CLI makes one call and exits, so blocking I/O with timeouts is the simplest correct shape:
/// no event loop to start, nothing to tear down.
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
        public var head: HTTPResponseHead
        public var body: [UInt8]
        public var status: Int { head.status }
    }

    /// Sends one request and reads the whole answer.
    public func send(
        method: String, path: String, body: [UInt8]? = nil, accept: String = ControlMediaType.json,
        timeoutSeconds: Double? = nil
    ) throws(ControlClientError) -> Response {
        var collected: [UInt8] = []
        let head = try exchange(method: method, path: path, body: body, accept: accept, timeoutSeconds: timeoutSeconds) { chunk in
            collected.append(contentsOf: chunk)
        }
        return Response(head: head, body: collected)
    }

    /// Calls an endpoint and decodes its JSON answer; an error body becomes `.refused`.
    public func call<Answer: Decodable>(
        _ type: Answer.Type, method: String, path: String, body: some Encodable, timeoutSeconds: Double? = nil
    ) throws(ControlClientError) -> Answer {
        let response = try send(method: method, path: path, body: [UInt8](ControlJSON.encode(body)), timeoutSeconds: timeoutSeconds)
        return try decodeAnswer(type, response)
    }

    /// Calls an endpoint without a request body.
    public func call<Answer: Decodable>(
        _ type: Answer.Type, method: String, path: String, timeoutSeconds: Double? = nil
    ) throws(ControlClientError) -> Answer {
        let response = try send(method: method, path: path, body: nil, timeoutSeconds: timeoutSeconds)
        return try decodeAnswer(type, response)
    }

    /// Decodes a success body, or throws the helper's error body.
    public func decodeAnswer<Answer: Decodable>(_ type: Answer.Type, _ response: Response) throws(ControlClientError) -> Answer {
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
    public func streamLines(
        method: String, path: String, body: [UInt8]?, timeoutSeconds: Double? = nil,
        onLine: ([UInt8]) -> Void
    ) throws(ControlClientError) {
        var pending: [UInt8] = []
        var errorBody: [UInt8] = []
        var streaming = false
        let head = try exchange(
            method: method, path: path, body: body, accept: ControlMediaType.ndjson, timeoutSeconds: timeoutSeconds,
            onHead: { head in streaming = (200...299).contains(head.status) }
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
        guard (200...299).contains(head.status) else { throw refusal(status: head.status, body: errorBody) }
        if !pending.isEmpty { onLine(pending) }
    }

    private func refusal(status: Int, body: [UInt8]) -> ControlClientError {
        if let envelope = try? ControlJSON.decoder().decode(ControlErrorEnvelope.self, from: Data(body)) {
            return .refused(status: status, error: envelope.error)
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return .badAnswer(path: socketPath, detail: "HTTP \(status) without an error body: \(text)")
    }

    private func exchange(
        method: String, path: String, body: [UInt8]?, accept: String, timeoutSeconds: Double?,
        onHead: (HTTPResponseHead) -> Void = { _ in }, onBody: ([UInt8]) -> Void
    ) throws(ControlClientError) -> HTTPResponseHead {
        let timeout = timeoutSeconds ?? self.timeoutSeconds
        let connection = try UnixSocketConnection(path: socketPath, timeoutSeconds: timeout)
        try connection.writeAll(requestBytes(method: method, path: path, body: body, accept: accept), timeoutSeconds: timeout)
        var reader = HTTPResponseReader(expectsNoBody: method == "HEAD")
        var head: HTTPResponseHead?
        do {
            while true {
                while let event = try reader.next() {
                    switch event {
                    case .head(let received):
                        // Interim 1xx answers precede the real one (RFC 9110 §15.2); skip them.
                        if received.status < 200 { reader = HTTPResponseReader(expectsNoBody: method == "HEAD"); continue }
                        head = received
                        onHead(received)
                    case .body(let chunk):
                        onBody(chunk)
                    case .end:
                        if let head { return head }
                    }
                }
                let bytes = try connection.readSome(timeoutSeconds: timeout)
                if bytes.isEmpty {
                    while let event = try reader.finish() {
                        if case .end = event, let head { return head }
                    }
                    throw ControlClientError.badAnswer(path: socketPath, detail: ControlClientError.closedBeforeAnswer)
                }
                reader.feed(bytes)
            }
        } catch let failure as HTTPResponseReader.Failure {
            // Not a byte of an answer: closed at once, not a garbled answer of another version.
            if failure == .truncated("no answer at all") { throw .badAnswer(path: socketPath, detail: ControlClientError.closedBeforeAnswer) }
            throw .badAnswer(path: socketPath, detail: failure.description)
        } catch let error as ControlClientError {
            throw error
        } catch {
            throw .badAnswer(path: socketPath, detail: "\(error)")
        }
    }

    func requestBytes(method: String, path: String, body: [UInt8]?, accept: String) -> [UInt8] {
        var target = path
        if let profile {
            let escaped = profile.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))) ?? profile
            target += (path.contains("?") ? "&" : "?") + "profile=" + escaped
        }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: scrolloff\r\nAccept: \(accept)\r\nConnection: close\r\n"
        head += "User-Agent: scrolloff-cli\r\n"
        if let body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }
}
