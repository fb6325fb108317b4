import DNSWire
import NIOCore
import Synchronization

/// Limits for DNS over TCP (RFC 7766 §6.2.3: servers should bound connections and close idle ones).
public struct TCPLimits: Sendable {
    public var maximumConnections: Int
    /// A connection with no query in flight and nothing received for this long is closed.
    public var idleTimeout: TimeAmount
    /// Queries in flight on one connection before it stops reading (RFC 7766 §6.2.1.2).
    public var maximumInFlightPerConnection: Int

    public init(maximumConnections: Int = 256, idleTimeout: TimeAmount = .seconds(10), maximumInFlightPerConnection: Int = 64) {
        self.maximumConnections = maximumConnections
        self.idleTimeout = idleTimeout
        self.maximumInFlightPerConnection = maximumInFlightPerConnection
    }
}

/// Counts open TCP connections across all event loops.
final class ConnectionCounter: Sendable {
    private let open = Atomic<Int>(0)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Takes a slot; false when all are in use.
    func acquire() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        if now > limit {
            open.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func release() { open.subtract(1, ordering: .relaxed) }

    var current: Int { open.load(ordering: .relaxed) }
}

/// Counts questions waiting for an upstream across all handlers, so shutdown can let them finish.
final class InFlightCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    func decrement() { count.subtract(1, ordering: .relaxed) }
    var current: Int { count.load(ordering: .relaxed) }
}

/// Serves framed queries on one TCP connection (RFC 7766). Queries are answered as they resolve,
/// possibly out of order (§6.2.1.1 pipelining); each reply carries its query's ID.
final class TCPQueryHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let chain: ResolverChain
    let limits: TCPLimits
    let counter: ConnectionCounter
    let pending: InFlightCounter
    let counters: QueryCounters?
    private var queryContext: QueryContext?
    /// This loop's counters; nil when metrics are off, and then no clock is read either.
    private var shard: QueryCounterShard?
    private var inFlight = 0
    private var holdsSlot = false
    private var idleTimer: Scheduled<Void>?

    init(
        chain: ResolverChain, limits: TCPLimits, counter: ConnectionCounter, pending: InFlightCounter = InFlightCounter(),
        counters: QueryCounters? = nil
    ) {
        self.chain = chain
        self.limits = limits
        self.counter = counter
        self.pending = pending
        self.counters = counters
    }

    func channelActive(context: ChannelHandlerContext) {
        guard counter.acquire() else {
            // Over the bound: refuse by closing at once, which clients treat as "try UDP or later".
            context.close(promise: nil)
            return
        }
        holdsSlot = true
        queryContext = QueryContext(eventLoop: context.eventLoop)
        shard = counters?.shard(for: context.eventLoop)
        armIdleTimer(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if holdsSlot { counter.release() }
        holdsSlot = false
        idleTimer?.cancel()
        idleTimer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let query = queryContext else { return }
        let frame = unwrapInboundIn(data)
        query.client = ClientAddress(context.remoteAddress)
        query.transport = .tcp
        query.decision = .allowed
        query.route = .local
        let started = shard == nil ? 0 : NIODeadline.now().uptimeNanoseconds
        armIdleTimer(context: context)
        let resolution = frame.withUnsafeReadableBytes { raw in
            query.packet = raw
            defer { query.packet = UnsafeRawBufferPointer(start: nil, count: 0) }
            return chain.resolve(query)
        }
        switch resolution {
        case .drop, .upstream:
            shard?.record(.dropped, nanoseconds: 0)
            return
        case .builtReply:
            write(query.builder.bytes, context: context)
            if let shard { query.builder.withUnsafeBytes { shard.record(query.route, reply: $0, since: started) } }
        case .scratchReply:
            write(query.scratch, context: context)
            shard?.record(query.route, reply: query.scratch, since: started)
        case .later(let future):
            let route = query.route
            inFlight += 1
            self.pending.increment()
            if inFlight >= limits.maximumInFlightPerConnection { context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in } }
            let pending = query.pending
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            future.whenComplete { result in
                let (handler, context) = loopBound.value
                handler.inFlight -= 1
                handler.pending.decrement()
                let reply = (try? result.get()) ?? LaterReply(ServerFailure.reply(for: pending))
                handler.write(reply.bytes, context: context)
                handler.shard?.record(reply.blocked ? .blocked : route, reply: reply.bytes, since: started)
                context.flush()
                if handler.inFlight < handler.limits.maximumInFlightPerConnection {
                    context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
                }
                handler.armIdleTimer(context: context)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or a framing error ends this connection only.
        context.close(promise: nil)
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 2)
        buffer.writeDNSFrame(bytes)
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    private func armIdleTimer(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(in: limits.idleTimeout) {
            let (handler, context) = loopBound.value
            // Answers still owed keep the connection open; the last one re-arms the timer.
            if handler.inFlight == 0 { context.close(promise: nil) }
        }
    }
}
