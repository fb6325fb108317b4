import ControlAPI
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Reads requests off one connection, answers each through the router, and enforces the body
/// limit. Requests on a connection are answered strictly in order (HTTP/1.1 pipelining).
struct ConnectionHandler: Sendable {
    let router: ControlRouter
    let maxBodyBytes: Int
    let logger: Logger

    func handle(_ connection: ControlConnection) async {
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                var parts = inbound.makeAsyncIterator()
                while let head = try await nextHead(&parts) {
                    let keepAlive = head.isKeepAlive
                    guard let body = try await readBody(head, &parts, outbound) else { return }
                    let request = ControlRequest(
                        method: head.method, target: head.uri, headers: head.headers, body: body, caller: connection.caller
                    )
                    let response = await router.respond(to: request)
                    try await write(response, keepAlive: keepAlive, version: head.version, outbound)
                    if !keepAlive { return }
                }
            }
        } catch {
            // Parser errors were already answered with 400 by ControlProtocolErrorHandler; a client
            // that went away mid-answer is not an error of the helper either.
            logger.debug("control connection ended", metadata: ["error": "\(error)", "client.pid": "\(connection.caller.pid)"])
        }
    }

    private func nextHead(_ parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator) async throws -> HTTPRequestHead? {
        while let part = try await parts.next() {
            if case .head(let head) = part { return head }
        }
        return nil
    }

    /// The whole body, or nil after answering 413 (the connection then closes, because the rest
    /// of an oversized body would otherwise be read as the next request).
    private func readBody(
        _ head: HTTPRequestHead, _ parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws -> [UInt8]? {
        if let declared = head.headers.first(name: "content-length").flatMap(Int.init), declared > maxBodyBytes {
            try await write(.failure(.payloadTooLarge(limit: maxBodyBytes)), keepAlive: false, version: head.version, outbound)
            return nil
        }
        if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            // curl waits for this before sending bodies over 1 KiB (RFC 9110 §10.1.1).
            try await outbound.write(.head(HTTPResponseHead(version: head.version, status: .continue)))
        }
        var body: [UInt8] = []
        while let part = try await parts.next() {
            switch part {
            case .body(let buffer):
                if body.count + buffer.readableBytes > maxBodyBytes {
                    try await write(.failure(.payloadTooLarge(limit: maxBodyBytes)), keepAlive: false, version: head.version, outbound)
                    return nil
                }
                body.append(contentsOf: buffer.readableBytesView)
            case .end:
                return body
            case .head:
                return nil
            }
        }
        return nil
    }

    private func write(
        _ response: ControlResponse, keepAlive: Bool, version: HTTPVersion,
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "scrolloff-dns")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        switch response {
        case .json(let status, let body, let extra):
            headers.add(name: "Content-Type", value: ControlMediaType.json)
            headers.add(name: "Content-Length", value: "\(body.count)")
            for (name, value) in extra { headers.add(name: name, value: value) }
            try await outbound.write(.head(HTTPResponseHead(version: version, status: status, headers: headers)))
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
            try await outbound.write(.end(nil))
        case .stream(let status, let contentType, let producer):
            headers.add(name: "Content-Type", value: contentType)
            // Without a Content-Length NIO frames the body with chunked transfer coding.
            try await outbound.write(.head(HTTPResponseHead(version: version, status: status, headers: headers)))
            try await producer(ControlStreamWriter { data in
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: data))))
            })
            try await outbound.write(.end(nil))
        }
    }
}
