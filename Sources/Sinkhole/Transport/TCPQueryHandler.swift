import DNSFraming
import DNSWire
import NIOCore
import Synchronization

/// Limits for DNS over TCP (RFC 7766 §6.2.3: servers should bound connections and close idle
/// ones). Each is a key of `[dns]` in scrolloff.toml; the defaults are the sample's.
public struct TCPLimits: Sendable, Equatable {
    /// Connections open at once, from all clients.
    public var maximumConnections: Int
    /// Connections open at once from one client address, so one client cannot take them all.
    public var maximumConnectionsPerClient: Int
    /// A connection with no query in flight and nothing received for this long is closed; so is
    /// one whose client has taken none of its replies for this long.
    public var idleTimeout: TimeAmount
    /// Queries of one connection being answered at once (RFC 7766 §6.2.1.2). Counted as frames are
    /// decoded: frames past it wait, unresolved, and the connection is not read meanwhile.
    public var maximumInFlightPerConnection: Int
    /// Queries of one client address being answered at once over all its connections, so that
    /// a client with many connections cannot fill the forwarder's 512 outstanding questions and
    /// leave every other client SERVFAIL.
    public var maximumInFlightPerClient: Int
    /// Reply bytes a connection may have waiting for its client to read them. Past it the
    /// connection is not read until the client has taken half of them.
    public var maximumUnsentBytes: Int

    public init(
        maximumConnections: Int = 256, maximumConnectionsPerClient: Int = 32, idleTimeout: TimeAmount = .seconds(10),
        maximumInFlightPerConnection: Int = 64, maximumInFlightPerClient: Int = 128, maximumUnsentBytes: Int = 64 * 1024
    ) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.idleTimeout = idleTimeout
        self.maximumInFlightPerConnection = maximumInFlightPerConnection
        self.maximumInFlightPerClient = maximumInFlightPerClient
        self.maximumUnsentBytes = maximumUnsentBytes
    }
}

/// Open TCP connections across all event loops, in total and per client address.
typealias ConnectionCounter = TCPConnectionRegistry

/// Queries being answered per client address over all its TCP connections, across event loops.
typealias ClientInFlight = ConnectionSlots<ClientAddress>

/// Counts questions waiting for an upstream across all handlers, so shutdown can let them finish.
final class InFlightCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    func decrement() { count.subtract(1, ordering: .relaxed) }
    var current: Int { count.load(ordering: .relaxed) }
}

/// Serves framed queries on one TCP connection (RFC 7766). Queries are answered as they resolve,
/// possibly out of order (§6.2.1.1 pipelining); each reply carries its query's ID.
///
/// Three bounds keep one connection from taking more than its share (SPEC §9.6):
/// - at most `maximumInFlightPerConnection` queries resolve at once. The frame decoder hands over
///   every frame of a read at once, so frames past the bound wait here, unresolved (a read is at
///   most 64 KiB, so that wait is bounded too), and the connection is not read meanwhile;
/// - at most `maximumUnsentBytes` of replies wait for the client (NIO's write-buffer water mark).
///   Past it the connection is neither read nor served until the client reads, and a client that
///   reads nothing for `idleTimeout` is disconnected. Its slot is the first taken for a newcomer
///   when all are (`TCPConnectionRegistry`);
/// - connections in total and per client address (`ConnectionCounter`), and queries being
///   answered per client address over all its connections (`ClientInFlight`). A connection whose
///   client is at that bound looks again every 20 ms, since the answer that frees a slot may come
///   on another connection and another event loop.
final class TCPQueryHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let chain: ResolverChain
    let limits: TCPLimits
    let counter: ConnectionCounter
    let pending: InFlightCounter
    let counters: QueryCounters?
    let limitLog: ThrottledLog?
    let clientInFlight: ClientInFlight
    private var queryContext: QueryContext?
    /// This loop's counters; nil when metrics are off, and then no clock is read either.
    private var shard: QueryCounterShard?
    private var client = ClientAddress.unknown
    private var inFlight = 0
    /// This connection's slot; nil when it was refused one.
    private var slot: TCPConnectionEntry?
    /// Frames decoded but not yet resolved, oldest first.
    private var waiting = CircularBuffer<ByteBuffer>()
    private var draining = false
    /// Whether the connection is being read (autoRead); internal for tests.
    private(set) var reading = true
    private var idleTimer: Scheduled<Void>?
    /// Armed while the client takes none of its replies; closes the connection when it fires.
    private var stallTimer: Scheduled<Void>?
    /// Armed while the client is at its in-flight bound; drains again when it fires.
    private var retryTimer: Scheduled<Void>?

    init(
        chain: ResolverChain, limits: TCPLimits, counter: ConnectionCounter, pending: InFlightCounter = InFlightCounter(),
        counters: QueryCounters? = nil, limitLog: ThrottledLog? = nil, clientInFlight: ClientInFlight? = nil
    ) {
        self.chain = chain
        self.limits = limits
        self.counter = counter
        self.pending = pending
        self.counters = counters
        self.limitLog = limitLog
        self.clientInFlight = clientInFlight ?? ClientInFlight(limit: .max, perKeyLimit: limits.maximumInFlightPerClient)
    }

    func channelActive(context: ChannelHandlerContext) {
        client = ClientAddress(context.remoteAddress)
        let channel = context.channel
        let address = context.remoteAddress?.ipAddress ?? "?"
        switch counter.admit(client, now: NIODeadline.now().uptimeNanoseconds, close: { channel.close(promise: nil) }) {
        case .admitted(let entry, let evicted):
            slot = entry
            if evicted != nil {
                limitLog?.warning(
                    "tcp-evict", "all \(counter.limit) DNS-over-TCP connections are open: closed the longest-idle one of the client holding the most, or first one whose client reads none of its replies (dns.tcp_connections)",
                    metadata: ["client.ip": "\(address)"])
            }
        case .refused(let refusal):
            // Over a bound: refuse by closing at once, which clients treat as "try UDP or later".
            switch refusal {
            case .total(let limit):
                limitLog?.warning("tcp-total", "refusing DNS-over-TCP connections: all \(limit) are open (dns.tcp_connections)",
                                  metadata: ["client.ip": "\(address)"])
            case .perKey(let limit):
                limitLog?.warning("tcp-client", "refusing DNS-over-TCP connections of a client that holds \(limit) already (dns.tcp_connections_per_client)",
                                  metadata: ["client.ip": "\(address)"])
            }
            context.close(promise: nil)
            return
        }
        queryContext = QueryContext(eventLoop: context.eventLoop)
        shard = counters?.shard(for: context.eventLoop)
        armIdleTimer(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let slot { counter.release(slot) }
        slot = nil
        idleTimer?.cancel()
        idleTimer = nil
        stallTimer?.cancel()
        stallTimer = nil
        retryTimer?.cancel()
        retryTimer = nil
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard queryContext != nil else { return }
        waiting.append(unwrapInboundIn(data))
        drain(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            slot?.stalled(nil)
            stallTimer?.cancel()
            stallTimer = nil
            drain(context: context)
            armIdleTimer(context: context)
            context.flush()
        } else if stallTimer == nil {
            // The first to be dropped when every connection is taken.
            slot?.stalled(NIODeadline.now().uptimeNanoseconds)
            // The idle timer must not be what keeps this connection: queries keep arriving from a
            // client that reads nothing, and each would otherwise restart it.
            idleTimer?.cancel()
            idleTimer = nil
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            stallTimer = context.eventLoop.scheduleTask(in: limits.idleTimeout) {
                loopBound.value.close(promise: nil)
            }
        }
        updateReading(context: context)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or a framing error ends this connection only.
        context.close(promise: nil)
    }

    /// Resolves waiting frames while the connection has room in flight and its client takes its
    /// replies; then reads again only if both still hold.
    private func drain(context: ChannelHandlerContext) {
        if !draining {
            draining = true
            defer { draining = false }
            while !waiting.isEmpty, inFlight < limits.maximumInFlightPerConnection, context.channel.isWritable, context.channel.isActive {
                // A slot of the client's budget for every query: most are answered at once and give
                // it back, but which ones go upstream is only known after resolving.
                guard clientInFlight.acquire(client) == nil else {
                    retryLater(context: context)
                    break
                }
                resolve(waiting.removeFirst(), context: context)
            }
        }
        updateReading(context: context)
    }

    private func retryLater(context: ChannelHandlerContext) {
        guard retryTimer == nil else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        retryTimer = context.eventLoop.scheduleTask(in: .milliseconds(20)) {
            let (handler, context) = loopBound.value
            handler.retryTimer = nil
            handler.drain(context: context)
            context.flush()
        }
    }

    private func updateReading(context: ChannelHandlerContext) {
        let shouldRead = waiting.isEmpty && inFlight < limits.maximumInFlightPerConnection && context.channel.isWritable
        guard shouldRead != reading, context.channel.isActive else { return }
        reading = shouldRead
        context.channel.setOption(ChannelOptions.autoRead, value: shouldRead).whenComplete { _ in }
    }

    /// Resolves one frame; the caller took a slot of the client's in-flight budget for it.
    private func resolve(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        guard let query = queryContext else {
            clientInFlight.release(client)
            return
        }
        let now = NIODeadline.now().uptimeNanoseconds
        let started = shard == nil ? 0 : now
        slot?.touch(now)
        armIdleTimer(context: context)
        let resolution = frame.withUnsafeReadableBytes { raw in
            chain.resolve(packet: raw, client: client, transport: .tcp, in: query)
        }
        if case .later = resolution {} else { clientInFlight.release(client) }
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
            let pending = query.pending
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            future.whenComplete { result in
                let (handler, context) = loopBound.value
                handler.inFlight -= 1
                handler.clientInFlight.release(handler.client)
                handler.pending.decrement()
                let reply = (try? result.get()) ?? LaterReply(ServerFailure.reply(for: pending))
                handler.write(reply.bytes, context: context)
                handler.shard?.record(reply.blocked ? .blocked : route, reply: reply.bytes, since: started)
                handler.drain(context: context)
                context.flush()
                if handler.stallTimer == nil { handler.armIdleTimer(context: context) }
            }
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        slot?.touch(NIODeadline.now().uptimeNanoseconds)
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
            if handler.inFlight == 0, handler.waiting.isEmpty { context.close(promise: nil) }
        }
    }
}
