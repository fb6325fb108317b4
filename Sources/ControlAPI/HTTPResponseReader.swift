/// An incremental HTTP/1.1 response parser for the CLI (RFC 9112): status line, header fields,
/// and a body framed by Content-Length, chunked transfer coding, or the end of the connection.
///
/// Bytes go in with `feed`, events come out of `next`; nothing blocks, so the socket code and the
/// tests drive it the same way. Every length is checked against limits before it is trusted, so
/// a confused or hostile peer cannot make the CLI allocate without bound.
public struct HTTPResponseReader: Sendable {
    public enum Event: Sendable, Equatable {
        case head(HTTPResponseHead)
        case body([UInt8])
        case end
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed(String)
        case tooLarge(String)
        case truncated(String)

        public var description: String {
            switch self {
            case .malformed(let detail): return "the helper's answer is not valid HTTP (\(detail))"
            case .tooLarge(let detail): return "the helper's answer is too large (\(detail))"
            case .truncated(let detail): return "the helper closed the connection mid-answer (\(detail))"
            }
        }
    }

    public var maxHeadBytes = 64 * 1024
    public var maxBodyBytes = 64 * 1024 * 1024

    private enum State: Sendable {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private var buffer: [UInt8] = []
    private var position = 0
    private var state = State.head
    private var bodyBytes = 0
    /// Set for answers to HEAD-like requests where the framing headers describe no body.
    private let expectsNoBody: Bool

    public init(expectsNoBody: Bool = false) {
        self.expectsNoBody = expectsNoBody
    }

    public var isDone: Bool { if case .done = state { return true } else { return false } }

    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        // Drop what was consumed before growing, so a long stream never accumulates.
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() throws(Failure) -> Event? {
        switch state {
        case .head:
            guard let end = find(crlfcrlf, from: position) else {
                if buffer.count - position > maxHeadBytes { throw .tooLarge("header section over \(maxHeadBytes) bytes") }
                return nil
            }
            let head = try parseHead(Array(buffer[position..<end]))
            position = end + 4
            state = try bodyState(for: head)
            return .head(head)
        case .fixed(let remaining):
            if remaining == 0 { state = .done; return .end }
            let available = min(remaining, buffer.count - position)
            guard available > 0 else { return nil }
            let chunk = Array(buffer[position..<position + available])
            position += available
            state = .fixed(remaining: remaining - available)
            return .body(chunk)
        case .chunkSize:
            guard let lineEnd = find(crlf, from: position) else {
                if buffer.count - position > 1024 { throw .malformed("chunk size line over 1 KiB") }
                return nil
            }
            let line = buffer[position..<lineEnd]
            position = lineEnd + 2
            // Chunk extensions (`;name=value`) carry nothing the CLI needs (RFC 9112 §7.1.1).
            let digits = line.prefix { $0 != UInt8(ascii: ";") }.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            guard !digits.isEmpty, digits.count <= 15, let size = Int(String(decoding: digits, as: UTF8.self), radix: 16) else {
                throw .malformed("bad chunk size '\(String(decoding: line.prefix(40), as: UTF8.self))'")
            }
            if size == 0 {
                state = .trailers
                return try next()
            }
            bodyBytes += size
            if bodyBytes > maxBodyBytes { throw .tooLarge("body over \(maxBodyBytes) bytes") }
            state = .chunkData(remaining: size)
            return try next()
        case .chunkData(let remaining):
            let available = min(remaining, buffer.count - position)
            guard available > 0 else { return nil }
            let chunk = Array(buffer[position..<position + available])
            position += available
            state = remaining - available == 0 ? .chunkDataEnd : .chunkData(remaining: remaining - available)
            return .body(chunk)
        case .chunkDataEnd:
            guard buffer.count - position >= 2 else { return nil }
            guard buffer[position] == 0x0D, buffer[position + 1] == 0x0A else { throw .malformed("chunk not followed by CRLF") }
            position += 2
            state = .chunkSize
            return try next()
        case .trailers:
            // Trailer fields end with an empty line; the CLI ignores their content.
            guard let lineEnd = find(crlf, from: position) else {
                if buffer.count - position > maxHeadBytes { throw .tooLarge("trailer section over \(maxHeadBytes) bytes") }
                return nil
            }
            let empty = lineEnd == position
            position = lineEnd + 2
            if empty {
                state = .done
                return .end
            }
            return try next()
        case .untilClose:
            guard buffer.count > position else { return nil }
            let chunk = Array(buffer[position...])
            position = buffer.count
            bodyBytes += chunk.count
            if bodyBytes > maxBodyBytes { throw .tooLarge("body over \(maxBodyBytes) bytes") }
            return .body(chunk)
        case .done:
            return nil
        }
    }

    /// The connection ended: completes a body framed by the close, or reports truncation.
    public mutating func finish() throws(Failure) -> Event? {
        switch state {
        case .untilClose:
            state = .done
            return .end
        case .done:
            return nil
        case .head:
            throw .truncated(buffer.count == position ? "no answer at all" : "inside the header section")
        case .fixed(let remaining):
            throw .truncated("\(remaining) body bytes missing")
        case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            throw .truncated("inside a chunked body")
        }
    }

    // MARK: head

    private let crlf: [UInt8] = [0x0D, 0x0A]
    private let crlfcrlf: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard buffer.count - start >= needle.count else { return nil }
        var index = start
        let last = buffer.count - needle.count
        while index <= last {
            if buffer[index] == needle[0] {
                var matches = true
                for offset in 1..<needle.count where buffer[index + offset] != needle[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }

    private func parseHead(_ bytes: [UInt8]) throws(Failure) -> HTTPResponseHead {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { throw .malformed("empty status line") }
        let statusLine = lines.removeFirst()
        // status-line = HTTP-version SP status-code SP [ reason-phrase ] (RFC 9112 §4)
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
              let status = Int(parts[1]), (100...599).contains(status)
        else { throw .malformed("bad status line '\(statusLine.prefix(60))'") }
        var fields: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw .malformed("bad header line '\(line.prefix(60))'")
            }
            let name = line[..<colon]
            guard !name.contains(" ") else { throw .malformed("space in header name '\(name.prefix(60))'") }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            fields.append((String(name), value))
        }
        return HTTPResponseHead(status: status, fields: fields)
    }

    private func bodyState(for head: HTTPResponseHead) throws(Failure) -> State {
        // 1xx, 204 and 304 answers never have a body (RFC 9112 §6.3, rule 1).
        if expectsNoBody || head.status < 200 || head.status == 204 || head.status == 304 { return .fixed(remaining: 0) }
        if let coding = head.value(of: "transfer-encoding") {
            guard coding.lowercased().split(separator: ",").last?.trimmingCharacters(in: " \t") == "chunked" else {
                throw .malformed("transfer coding '\(coding)' is not chunked")
            }
            return .chunkSize
        }
        let lengths = head.values(of: "content-length")
        if !lengths.isEmpty {
            // Differing Content-Length values make the framing ambiguous (RFC 9112 §6.3, rule 5).
            let distinct = Set(lengths.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: " \t") } })
            guard distinct.count == 1, let value = distinct.first, value.allSatisfy(\.isASCIIDigit),
                  value.count <= 15, let length = Int(value)
            else { throw .malformed("bad Content-Length '\(lengths.joined(separator: ", "))'") }
            if length > maxBodyBytes { throw .tooLarge("Content-Length \(length)") }
            return .fixed(remaining: length)
        }
        return .untilClose
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}

/// The status and header fields of a response, names compared case-insensitively (RFC 9110 §5.1).
public struct HTTPResponseHead: Sendable, Equatable {
    public var status: Int
    public var fields: [(String, String)]

    public init(status: Int, fields: [(String, String)]) {
        self.status = status
        self.fields = fields
    }

    public func values(of name: String) -> [String] {
        fields.filter { $0.0.caseInsensitiveEquals(name) }.map(\.1)
    }

    public func value(of name: String) -> String? {
        let all = values(of: name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    public var contentType: String? {
        value(of: "content-type")?.split(separator: ";").first.map { String($0).trimmingCharacters(in: " \t").lowercased() }
    }

    public static func == (a: HTTPResponseHead, b: HTTPResponseHead) -> Bool {
        a.status == b.status && a.fields.elementsEqual(b.fields) { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}

extension String {
    fileprivate func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}
