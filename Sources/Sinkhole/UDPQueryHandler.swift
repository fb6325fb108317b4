import DNSWire
import NIOCore

/// Serves queries arriving on one UDP socket (one per event loop, SO_REUSEPORT).
final class UDPQueryHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    let chain: ResolverChain
    let pending: InFlightCounter
    let counters: QueryCounters?
    private var queryContext: QueryContext?
    /// This loop's counters; nil when metrics are off, and then no clock is read either.
    private var shard: QueryCounterShard?
    private var pendingFlush = false

    init(chain: ResolverChain, pending: InFlightCounter = InFlightCounter(), counters: QueryCounters? = nil) {
        self.chain = chain
        self.pending = pending
        self.counters = counters
    }

    func handlerAdded(context: ChannelHandlerContext) {
        queryContext = QueryContext(eventLoop: context.eventLoop)
        shard = counters?.shard(for: context.eventLoop)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let query = queryContext else { return }
        let envelope = unwrapInboundIn(data)
        let remote = envelope.remoteAddress
        let started = shard == nil ? 0 : NIODeadline.now().uptimeNanoseconds
        let resolution = envelope.data.withUnsafeReadableBytes { raw in
            chain.resolve(packet: raw, client: ClientAddress(remote), transport: .udp, in: query)
        }
        switch resolution {
        case .drop:
            shard?.record(.dropped, nanoseconds: 0)
            return
        case .builtReply:
            // Copied straight from the builder into the socket's buffer: `builder.bytes` would
            // make an Array per blocked reply first (issue 15: no allocation of our own per reply).
            query.builder.withUnsafeBytes { write($0, to: remote, context: context) }
            if let shard { query.builder.withUnsafeBytes { shard.record(query.route, reply: $0, since: started) } }
        case .scratchReply:
            query.scratch.withUnsafeBytes { write($0, to: remote, context: context) }
            shard?.record(query.route, reply: query.scratch, since: started)
        case .later(let future):
            let pending = query.pending
            let route = query.route
            self.pending.increment()
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            future.whenComplete { result in
                let (handler, context) = loopBound.value
                handler.pending.decrement()
                let reply = (try? result.get()) ?? LaterReply(ServerFailure.reply(for: pending))
                handler.write(reply.bytes, to: remote, context: context)
                handler.shard?.record(reply.blocked ? .blocked : route, reply: reply.bytes, since: started)
                handler.flushIfNeeded(context: context)
            }
        case .upstream:
            // `ResolverChain.resolve` renders upstream answers; never reached.
            return
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Replies to a burst of queries from one vector read go out in one flush (sendmmsg).
        flushIfNeeded(context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A UDP socket reports ICMP errors of earlier sends here; they concern one client only.
    }

    private func write(_ bytes: [UInt8], to remote: SocketAddress, context: ChannelHandlerContext) {
        bytes.withUnsafeBytes { write($0, to: remote, context: context) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer, to remote: SocketAddress, context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: remote, data: buffer)), promise: nil)
        pendingFlush = true
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard pendingFlush else { return }
        pendingFlush = false
        context.flush()
    }
}

/// SERVFAIL for a question whose answer could not be produced (RFC 1035 §4.1.1).
enum ServerFailure {
    static func reply(for pending: PendingQuestion) -> [UInt8] {
        var builder = DNSResponseBuilder(capacity: 512)
        LocalAnswer.writeEmpty(into: &builder, query: pending.query, rcode: .serverFailure, limit: pending.limit)
        return builder.bytes
    }
}
