import NIOCore
import NIOEmbedded
import NIOHTTP1

/// SwiftNIO's HTTP/1.1 request encoder and response decoder (llhttp), run on an `EmbeddedChannel`
/// so the CLI keeps its plain blocking socket: bytes read from the socket go in, response parts
/// come out; no event loop thread is started. Pairing the two lets the decoder know the request's
/// method (a HEAD answer has no body), and it drops interim 1xx answers (RFC 9110 §15.2).
struct HTTPCodec {
    enum Part {
        case head(status: Int)
        case body([UInt8])
        case end
    }

    private let channel = EmbeddedChannel()

    init() throws {
        try channel.pipeline.syncOperations.addHTTPClientHandlers()
    }

    /// The request as bytes on the wire.
    func encode(method: String, target: String, headers: [(String, String)], body: [UInt8]?) throws -> [UInt8] {
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: target, headers: HTTPHeaders(headers))
        try channel.writeOutbound(HTTPClientRequestPart.head(head))
        if let body { try channel.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body)))) }
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        return bytes
    }

    /// Feeds bytes read from the socket; returns the parts they complete. Throws NIO's
    /// `HTTPParserError` for an answer that is not valid HTTP.
    func feed(_ bytes: [UInt8]) throws -> [Part] {
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        return try drain()
    }

    /// The connection ended: completes a body framed by the close, or throws for a truncated one.
    func finish() throws -> [Part] {
        channel.pipeline.fireChannelInactive()
        try channel.throwIfErrorCaught()
        return try drain()
    }

    private func drain() throws -> [Part] {
        var parts: [Part] = []
        while let part = try channel.readInbound(as: HTTPClientResponsePart.self) {
            switch part {
            case .head(let head): parts.append(.head(status: Int(head.status.code)))
            case .body(let buffer): parts.append(.body(Array(buffer.readableBytesView)))
            case .end: parts.append(.end)
            }
        }
        return parts
    }
}
