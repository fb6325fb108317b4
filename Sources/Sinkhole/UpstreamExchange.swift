import DNSWire
import NIOCore
import NIOPosix

/// Why one exchange with an upstream failed. Logged, never sent to a client (that gets SERVFAIL).
public enum UpstreamError: Error, Sendable, CustomStringConvertible {
    case timedOut(upstream: SocketAddress, transport: DNSTransport)
    case connectionClosed(upstream: SocketAddress)
    case cannotEncode(reason: String)

    public var description: String {
        switch self {
        case .timedOut(let upstream, let transport):
            "upstream \(upstream) did not answer over \(transport) in time; check that it is reachable"
        case .connectionClosed(let upstream):
            "upstream \(upstream) closed the TCP connection before answering"
        case .cannotEncode(let reason):
            "could not encode the upstream query: \(reason)"
        }
    }
}

/// The rules of RFC 5452 §9.1 for accepting a reply: it comes from the address and port we sent to,
/// carries our random ID and echoes our question. Anything else is ignored, not an error, so that a
/// spoofer cannot end the wait early either.
struct ReplyMatcher: Sendable {
    let upstream: SocketAddress
    let id: UInt16
    let question: DNSQuestion

    func accepts(_ bytes: ByteBuffer, from source: SocketAddress?) -> DNSMessage? {
        if let source, source != upstream { return nil }
        guard let message = try? bytes.withUnsafeReadableBytes({ raw in try DNSMessage(parsing: raw) }) else { return nil }
        guard message.header.isResponse, message.header.id == id else { return nil }
        if message.questions.isEmpty {
            // Some servers drop the question from FORMERR and NOTIMP (they could not read it);
            // such a reply carries no data to poison anything, and we need it to retry without EDNS.
            return message.rcode == .formatError || message.rcode == .notImplemented ? message : nil
        }
        guard message.questions.count == 1 else { return nil }
        let echoed = message.questions[0]
        guard echoed.name == question.name, echoed.type == question.type, echoed.class == question.class else { return nil }
        return message
    }
}

/// Receives replies on a one-query UDP socket and completes the promise with the first match.
final class UpstreamUDPHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    let matcher: ReplyMatcher
    let promise: EventLoopPromise<DNSMessage>

    init(matcher: ReplyMatcher, promise: EventLoopPromise<DNSMessage>) {
        self.matcher = matcher
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        if let message = matcher.accepts(envelope.data, from: envelope.remoteAddress) {
            promise.succeed(message)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors (port unreachable) surface here on some systems; the timeout decides.
    }
}

/// Receives framed replies on a TCP connection to an upstream.
final class UpstreamTCPHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let matcher: ReplyMatcher
    let promise: EventLoopPromise<DNSMessage>

    init(matcher: ReplyMatcher, promise: EventLoopPromise<DNSMessage>) {
        self.matcher = matcher
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let message = matcher.accepts(unwrapInboundIn(data), from: nil) {
            promise.succeed(message)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(UpstreamError.connectionClosed(upstream: matcher.upstream))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}

/// One query to one upstream over UDP or TCP.
enum UpstreamExchange {
    /// Sends `query` from a fresh socket (a new random source port, RFC 5452 §9.2) and waits at most
    /// `timeout` for a matching reply.
    static func udp(
        _ query: [UInt8], matcher: ReplyMatcher, timeout: TimeAmount, on loop: any EventLoop
    ) async throws -> DNSMessage {
        let promise = loop.makePromise(of: DNSMessage.self)
        let bindAddress = matcher.upstream.protocol == .inet6 ? "::" : "0.0.0.0"
        let channel = try await DatagramBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(UpstreamUDPHandler(matcher: matcher, promise: promise))
                }
            }
            .bind(host: bindAddress, port: 0)
            .get()
        let timer = loop.scheduleTask(in: timeout) {
            promise.fail(UpstreamError.timedOut(upstream: matcher.upstream, transport: .udp))
        }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        var buffer = channel.allocator.buffer(capacity: query.count)
        buffer.writeBytes(query)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: matcher.upstream, data: buffer), promise: nil)
        return try await promise.futureResult.get()
    }

    /// Sends `query` over a new TCP connection (RFC 7766 §6.2.1: after a truncated UDP reply).
    static func tcp(
        _ query: [UInt8], matcher: ReplyMatcher, timeout: TimeAmount, on loop: any EventLoop
    ) async throws -> DNSMessage {
        let promise = loop.makePromise(of: DNSMessage.self)
        let timer = loop.scheduleTask(in: timeout) {
            promise.fail(UpstreamError.timedOut(upstream: matcher.upstream, transport: .tcp))
        }
        defer { timer.cancel() }
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(UpstreamTCPHandler(matcher: matcher, promise: promise))
                    }
                }
                .connect(to: matcher.upstream)
                .get()
        } catch {
            promise.fail(error)
            throw error
        }
        defer { channel.close(promise: nil) }
        var buffer = channel.allocator.buffer(capacity: query.count + 2)
        buffer.writeDNSFrame(query)
        channel.writeAndFlush(buffer, promise: nil)
        return try await promise.futureResult.get()
    }
}
