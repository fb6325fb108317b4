import DNSFraming
import DNSWire
import NIOCore
import NIOPosix
import Synchronization

/// Why one exchange with an upstream failed. Logged, never sent to a client (that gets SERVFAIL).
package enum UpstreamError: Error, Sendable, CustomStringConvertible {
    case timedOut(upstream: SocketAddress, transport: DNSTransport)
    case connectionClosed(upstream: SocketAddress)
    case cannotEncode(reason: String)
    /// A reply echoed our question in another letter case than we sent (0x20).
    case caseMismatch(upstream: SocketAddress)
    /// This many datagrams that were not our reply reached the query's port.
    case unwantedReplies(upstream: SocketAddress, count: Int)
    /// `ForwarderConfiguration.maximumTCPExchanges` questions are over TCP already.
    case tcpExchangesBusy(limit: Int)

    /// The UDP exchange was abandoned as possibly spoofed; the question is asked again over TCP.
    package var suspectsSpoofing: Bool {
        switch self {
        case .caseMismatch, .unwantedReplies: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .timedOut(let upstream, let transport):
            "upstream \(upstream) did not answer over \(transport) in time; check that it is reachable"
        case .connectionClosed(let upstream):
            "upstream \(upstream) closed the TCP connection before answering"
        case .cannotEncode(let reason):
            "could not encode the upstream query: \(reason)"
        case .caseMismatch(let upstream):
            "a reply said to come from \(upstream) echoed the question in another letter case than was sent (0x20); asking again over TCP"
        case .unwantedReplies(let upstream, let count):
            "\(count) replies that were not the answer reached the query's port for \(upstream), a likely spoofing attempt; asking again over TCP"
        case .tcpExchangesBusy(let limit):
            "\(limit) questions are over TCP to upstreams already, as many as the descriptor limit allows"
        }
    }
}

/// What one datagram arriving on an exchange's socket is to that exchange.
enum ReplyVerdict {
    /// Our reply: from the upstream, our ID, our question with our spelling.
    case accepted(DNSMessage)
    /// From the upstream with our ID and our question, but not with the letter case we sent
    /// (draft-vixie-dnsext-dns0x20). Either the upstream does not preserve case or someone guessed
    /// our ID and port without seeing the query; the exchange retries over TCP to find out.
    case caseMismatch
    /// Anything else: another source, another ID, another question, not DNS at all.
    case unwanted
}

/// The rules of RFC 5452 §9.1 for accepting a reply: it comes from the address and port we sent to,
/// carries our random ID and echoes our question. Anything else is ignored, not an error, so that a
/// spoofer cannot end the wait early either. With `exactName` set (0x20, draft-vixie-dnsext-dns0x20)
/// the echoed name must also have the letter case we sent, octet for octet.
package struct ReplyMatcher: Sendable {
    let upstream: SocketAddress
    let id: UInt16
    let question: DNSQuestion
    /// The question name's wire octets as sent, with their random case; nil = compare ignoring case.
    var exactName: [UInt8]? = nil

    package init(upstream: SocketAddress, id: UInt16, question: DNSQuestion, exactName: [UInt8]? = nil) {
        self.upstream = upstream
        self.id = id
        self.question = question
        self.exactName = exactName
    }

    func check(_ bytes: ByteBuffer, from source: SocketAddress?) -> ReplyVerdict {
        if let source, source != upstream { return .unwanted }
        guard let message = try? bytes.withUnsafeReadableBytes({ raw in try DNSMessage(parsing: raw) }) else { return .unwanted }
        guard message.header.isResponse, message.header.id == id else { return .unwanted }
        if message.questions.isEmpty {
            // Some servers drop the question from FORMERR and NOTIMP (they could not read it);
            // such a reply carries no data to poison anything, and we need it to retry without EDNS.
            return message.rcode == .formatError || message.rcode == .notImplemented ? .accepted(message) : .unwanted
        }
        guard message.questions.count == 1 else { return .unwanted }
        let echoed = message.questions[0]
        guard echoed.name == question.name, echoed.type == question.type, echoed.class == question.class else { return .unwanted }
        if let exactName, echoed.name.wireBytes != exactName { return .caseMismatch }
        return .accepted(message)
    }

    func accepts(_ bytes: ByteBuffer, from source: SocketAddress?) -> DNSMessage? {
        if case .accepted(let message) = check(bytes, from: source) { return message }
        return nil
    }
}

/// Replies that were not the reply awaited, since start, for the metrics.
package final class UnwantedReplyCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    package init() {}
    package func add(_ count: UInt64) { value.wrappingAdd(count, ordering: .relaxed) }
    package var total: UInt64 { value.load(ordering: .relaxed) }
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

/// One query to one upstream over TCP (UDP goes through `UpstreamSocketPool`).
package enum UpstreamExchange {
    /// SO_MARK (socket(7)), at most Int32.max (`firewall.mark`'s bound: NIO passes a C int); set
    /// only when asked for, since the kernel wants CAP_NET_ADMIN (or CAP_NET_RAW) for any value,
    /// and an unprivileged helper must still forward. The TCP sockets here and the UDP pool's
    /// sockets (`LoopSockets`) both carry it.
    static let markOption = ChannelOptions.Types.SocketOption(level: NIOBSDSocket.OptionLevel.socket, name: NIOBSDSocket.Option(rawValue: SO_MARK))
    /// Sends `query` over a new TCP connection (RFC 7766 §6.2.1: after a truncated UDP reply).
    package static func tcp(
        _ query: [UInt8], matcher: ReplyMatcher, timeout: TimeAmount, mark: UInt32? = nil, on loop: any EventLoop
    ) async throws -> DNSMessage {
        let promise = loop.makePromise(of: DNSMessage.self)
        let timer = loop.scheduleTask(in: timeout) {
            promise.fail(UpstreamError.timedOut(upstream: matcher.upstream, transport: .tcp))
        }
        defer { timer.cancel() }
        let channel: any Channel
        do {
            var bootstrap = ClientBootstrap(group: loop)
            if let mark { bootstrap = bootstrap.channelOption(Self.markOption, value: Int(mark)) }
            channel = try await bootstrap
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
