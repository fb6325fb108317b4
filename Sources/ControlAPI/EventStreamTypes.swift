import Foundation

/// The live event stream (`GET /v1/events/stream`, SPEC §9c), as Server-Sent Events (the WHATWG
/// HTML standard's `text/event-stream`): every event `scrolloff events` shows, for the profiles the
/// caller may view, as it is committed. Each event is one SSE message whose `id` is the event
/// log's row id and whose `data` is its `EventReport` as JSON; comments (`: …`) are heartbeats.
/// A reader that falls behind gets a `dropped` message (`EventStreamDropped`) and the connection
/// ends; it resumes with `Last-Event-ID` or `?after=` from the last id it got.
public enum EventStream {
    public static let mediaType = "text/event-stream"
    /// The header a reconnecting reader sends its last id in (what `EventSource` does).
    public static let lastEventIDHeader = "Last-Event-ID"
    /// The SSE event name of the notice that the reader fell behind.
    public static let droppedEvent = "dropped"
    /// A heartbeat comment goes out this often, so a dead peer is found and a live one knows the
    /// helper is there (a reader that hears nothing for 3 of these reconnects).
    public static let heartbeatSeconds = 15
    /// What `retry:` tells a browser to wait before it reconnects.
    public static let retryMilliseconds = 2000
    /// Events sent per read of the database when a reader resumes.
    public static let resumePage = 500

    /// One SSE message; `data` may hold several lines.
    public static func message(id: Int64?, event: String? = nil, data: String) -> String {
        var text = ""
        if let id { text += "id: \(id)\n" }
        if let event { text += "event: \(event)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }

    /// A comment line; readers ignore it.
    public static func comment(_ text: String) -> String { ": \(text)\n\n" }

    /// The id to resume after: `?after=` wins over `Last-Event-ID`; nil when neither is given
    /// (then only what happens from now on is sent). A value that is not a whole number from 0 to
    /// 2⁶³−1 is a `WireRangeError` naming where it came from.
    public static func resumeID(query: String?, header: String?) throws(WireRangeError) -> Int64? {
        if let query, !query.isEmpty { return try parseID(query, field: ControlQuery.after.name) }
        if let header, !header.isEmpty { return try parseID(header.trimmingCharacters(in: .whitespaces), field: lastEventIDHeader) }
        return nil
    }

    static func parseID(_ text: String, field: String) throws(WireRangeError) -> Int64 {
        guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(text) else {
            throw WireRangeError(field: field, allowed: "an event id between 0 and 9223372036854775807", sent: WireRangeError.quoted(text),
                                 hint: "Send the id of the last event you got, such as 1234.")
        }
        return value
    }
}

/// The `data` of a `dropped` message: the reader fell behind and was let go.
public struct EventStreamDropped: Hashable, Sendable, Codable {
    /// The last event id sent; resume after it.
    public var lastID: Int64
    public var message: String

    public init(lastID: Int64, message: String) {
        self.lastID = lastID
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case message
        case lastID = "last_id"
    }
}

/// The answer type of the stream endpoint: SSE text, not a JSON document.
public struct ServerSentEvents: Sendable, Equatable {
    public init() {}
}

/// One parsed SSE message.
public struct ServerSentEvent: Hashable, Sendable {
    public var id: String?
    /// `message` when the stream names none.
    public var event: String
    public var data: String

    public init(id: String?, event: String, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}

/// Splits an SSE byte stream into messages (HTML's "event stream interpretation": `field: value`
/// lines, a blank line dispatches, lines starting with `:` are comments). Fed in any pieces.
public struct ServerSentEventParser: Sendable {
    private var pending: [UInt8] = []
    /// The stream's cursor: the last `id:` field seen, kept across messages and set by a message
    /// with an id and no data too (HTML's "last event ID buffer"); resume after it.
    public private(set) var lastEventID: String?
    private var event: String?
    private var data: [String] = []
    /// Comments seen (heartbeats), for readers that watch the line is alive.
    public private(set) var comments = 0

    public init() {}

    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        pending.append(contentsOf: bytes)
        var out: [ServerSentEvent] = []
        while let newline = pending.firstIndex(of: 0x0A) {
            var line = Array(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.last == 0x0D { line.removeLast() }
            if line.isEmpty {
                if !data.isEmpty || event != nil {
                    out.append(ServerSentEvent(id: lastEventID, event: event ?? "message", data: data.joined(separator: "\n")))
                }
                event = nil
                data = []
                continue
            }
            if line.first == 0x3A {
                comments += 1
                continue
            }
            let text = String(decoding: line, as: UTF8.self)
            let field: Substring
            var value: Substring
            if let colon = text.firstIndex(of: ":") {
                field = text[..<colon]
                value = text[text.index(after: colon)...]
                if value.first == " " { value = value.dropFirst() }
            } else {
                field = Substring(text)
                value = ""
            }
            switch field {
            case "id": lastEventID = String(value)
            case "event": event = String(value)
            case "data": data.append(String(value))
            default: break
            }
        }
        return out
    }
}
