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
    /// Reply bytes the kernel may hold for a connection whose client has not read them (its send
    /// buffer); past it and `queuedReplyBytes` the connection is not read until the client reads.
    public var maximumUnsentBytes: Int
    /// Reply bytes NIO holds for a connection beyond the kernel's send buffer before it stops
    /// reading the connection: about a turn's replies. It was `maximumUnsentBytes` too, 64 KiB of
    /// ByteBuffers per connection whose client reads nothing, on every such connection.
    public var queuedReplyBytes = 4096

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
/// - replies the client has not read: the kernel's send buffer (`maximumUnsentBytes`) and then
///   `queuedReplyBytes` held here (NIO's write-buffer water mark). Past it the connection is
///   neither read nor served until the client reads, and a client that reads nothing for
///   `idleTimeout` is disconnected. Its slot is the first taken for a newcomer when all are
///   (`TCPConnectionRegistry`);
/// - connections in total and per client (`ConnectionCounter`), and queries being answered per
///   client over all its connections (`ClientInFlight`), a client being an IPv4 address or an
///   IPv6 /64 (`ClientAddress.deviceKey`). A connection whose
///   client is at that bound looks again every 20 ms, since the answer that frees a slot may come
///   on another connection and another event loop.
///
/// And no connection holds its event loop: a read is at most 128 bytes (`DNSServer`), so a turn
/// of the loop resolves at most 9 of one connection's pipelined queries, and replies are flushed
/// once per turn, not once each. Slow readers from ten addresses (256 connections pipelining,
/// never reading) raised another client's p99 to 435 ms in a release build: a profile showed a
/// `writev` for every reply (a quarter of the loops' time), the idle timer moved for every query
/// (a tenth), and an upstream answer completing the ~2,000 queries joined to it (the cache's
/// waiters) at once, each draining and flushing its connection there and then. A completion now
/// only writes its reply; one task per connection flushes and resolves what waits.
///
/// And a client's connections take turns on their loop (`TCPTurns`): one is read and answered at
/// a time, so a turn of the loop grows with the clients that pipeline, not with their connections.
final class TCPQueryHandler: ChannelInboundHandler, TCPTurnTaker {
    /// Bytes of one read of a connection, one read per turn of its loop.
    static let readBytes = 128

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
    /// What the per-client bounds count this connection under: its client's /64 for IPv6.
    private var budgetKey = ClientAddress.unknown
    private var inFlight = 0
    /// This connection's slot; nil when it was refused one.
    private var slot: TCPConnectionEntry?
    /// Frames decoded but not yet resolved, oldest first.
    private var waiting = CircularBuffer<ByteBuffer>()
    private var draining = false
    /// Whether the connection is being read (autoRead); internal for tests.
    private(set) var reading = true
    private var idleTimer: Scheduled<Void>?
    /// When a query was last read or answered, on the loop's clock; the idle timer, armed once,
    /// looks at it when it fires rather than being moved for every query (a cancel and a schedule
    /// each, 10% of the loop's time under a pipelining flood).
    private var lastActivity = NIODeadline.uptimeNanoseconds(0)
    /// A task is queued to flush and drain this connection after answers that came in.
    private var serveQueued = false
    /// Armed while the client takes none of its replies; closes the connection when it fires.
    private var stallTimer: Scheduled<Void>?
    /// Armed while the client is at its in-flight bound; drains again when it fires.
    private var retryTimer: Scheduled<Void>?
    /// This loop's turns of the connections of each client; nil: this connection is not in one.
    let turns: TCPTurns?
    private enum Turn { case none, serving, waiting }
    /// Whether this connection has its client's turn on this loop, waits for it, or needs none.
    private var turn = Turn.none
    /// Queries resolved since this connection got the turn.
    private var servedInTurn = 0
    /// The last read filled its buffer: the client had more to send than one read takes. Set by
    /// `ReadMeter`, ahead of the frame decoder.
    fileprivate(set) var lastReadFull = false
    fileprivate(set) var lastReadAt = NIODeadline.uptimeNanoseconds(0)
    /// Armed while this connection keeps the turn with nothing to resolve: gives it back if the
    /// client sends nothing more (`TCPTurns.quietAfter`).
    private var quietTimer: Scheduled<Void>?
    /// Kept while the channel is active, for `resume`.
    private var turnContext: ChannelHandlerContext?

    init(
        chain: ResolverChain, limits: TCPLimits, counter: ConnectionCounter, pending: InFlightCounter = InFlightCounter(),
        counters: QueryCounters? = nil, limitLog: ThrottledLog? = nil, clientInFlight: ClientInFlight? = nil,
        slot: TCPConnectionEntry? = nil, turns: TCPTurns? = nil
    ) {
        self.slot = slot
        self.turns = turns
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
        budgetKey = client.deviceKey
        if slot == nil, !admit(context: context) { return }
        queryContext = QueryContext(eventLoop: context.eventLoop)
        shard = counters?.shard(for: context.eventLoop)
        lastActivity = context.eventLoop.now
        armIdleTimer(context: context)
        if turns != nil { turnContext = context }
        context.fireChannelActive()
    }

    /// Takes a slot here, for a connection the listener did not admit (`TCPAdmission` admits the
    /// server's own on its accepting thread and hands the slot over); false when refused.
    private func admit(context: ChannelHandlerContext) -> Bool {
        let channel = context.channel
        let address = context.remoteAddress?.ipAddress ?? "?"
        let outcome = counter.admit(budgetKey, now: NIODeadline.now().uptimeNanoseconds, close: { channel.close(promise: nil) })
        outcome.log(to: limitLog, address: address, limit: counter.limit)
        switch outcome {
        case .admitted(let entry, _):
            slot = entry
        case .refused:
            // Over a bound: refuse by closing at once, which clients treat as "try UDP or later".
            context.close(promise: nil)
            return false
        }
        return true
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
        quietTimer?.cancel()
        quietTimer = nil
        if turn != .none { turns?.leave(budgetKey, self) }
        turn = .none
        turnContext = nil
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard queryContext != nil else { return }
        // Resolved together at the end of the read (at most 128 bytes of frames), then flushed once.
        waiting.append(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        drain(context: context)
        context.flush()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            slot?.stalled(nil)
            stallTimer?.cancel()
            stallTimer = nil
            // The client read: its idle clock starts again.
            lastActivity = context.eventLoop.now
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
            // Nothing of it can be answered until its client reads: another connection may.
            if turn == .serving { endTurn() }
        }
        updateReading(context: context)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or a framing error ends this connection only.
        context.close(promise: nil)
    }

    /// Resolves waiting frames while the connection has room in flight and its client takes its
    /// replies; then reads again only if both still hold. The caller flushes.
    private func drain(context: ChannelHandlerContext) {
        if !draining {
            draining = true
            defer { draining = false }
            if turn == .none, !waiting.isEmpty, let turns, context.channel.isWritable {
                if turns.take(budgetKey, for: self) {
                    turn = .serving
                    servedInTurn = 0
                } else {
                    turn = .waiting
                }
            }
            var answered = 0
            while turn != .waiting, !waiting.isEmpty, inFlight < limits.maximumInFlightPerConnection, context.channel.isWritable,
                context.channel.isActive
            {
                // A slot of the client's budget for every query: most are answered at once and give
                // it back, but which ones go upstream is only known after resolving.
                guard clientInFlight.acquire(budgetKey) == nil else {
                    retryLater(context: context)
                    break
                }
                resolve(waiting.removeFirst(), context: context)
                answered += 1
            }
            if answered > 0 { noteActivity(context: context) }
            if turn == .serving {
                servedInTurn += answered
                passTurnIfDone(context: context)
            }
        }
        updateReading(context: context)
    }

    /// After a drain with the turn: hands it to another connection of the client that waits once
    /// this one has had `quantum` answers, and gives it back when all the client sent is resolved
    /// (its last read did not fill the buffer) or its client takes no replies.
    private func passTurnIfDone(context: ChannelHandlerContext) {
        guard let turns else { return }
        if !context.channel.isWritable || !context.channel.isActive {
            endTurn()
        } else if servedInTurn >= TCPTurns.quantum, turns.yield(budgetKey, from: self) {
            quietTimer?.cancel()
            quietTimer = nil
            turn = .waiting
        } else if waiting.isEmpty, !lastReadFull {
            endTurn()
        } else if waiting.isEmpty, quietTimer == nil {
            armQuietCheck(context: context)
        }
    }

    private func endTurn() {
        quietTimer?.cancel()
        quietTimer = nil
        turn = .none
        turns?.giveBack(budgetKey, from: self)
    }

    /// A connection that keeps the turn because its last read was full and then is not read for
    /// `quietAfter` gives it back: its client stopped sending at a read's boundary.
    private func armQuietCheck(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        quietTimer = context.eventLoop.scheduleTask(deadline: max(lastReadAt, context.eventLoop.now) + TCPTurns.quietAfter) {
            let (handler, context) = loopBound.value
            handler.quietTimer = nil
            guard handler.turn == .serving, handler.waiting.isEmpty else { return }
            if handler.lastReadAt + TCPTurns.quietAfter <= context.eventLoop.now {
                handler.endTurn()
                handler.updateReading(context: context)
            } else {
                handler.armQuietCheck(context: context)
            }
        }
    }

    /// Its client's turn came: answer what was read before it waited, and read again.
    func resume() {
        guard let context = turnContext, context.channel.isActive, turn == .waiting else { return }
        turn = .serving
        servedInTurn = 0
        lastReadAt = context.eventLoop.now
        drain(context: context)
        context.flush()
    }

    /// Flushes and drains once, however many answers came in meanwhile: all the queries joined to
    /// one upstream question complete together, and each flushing would be a `writev` each.
    private func queueServe(context: ChannelHandlerContext) {
        guard !serveQueued else { return }
        serveQueued = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = loopBound.value
            handler.serveQueued = false
            guard context.channel.isActive else { return }
            handler.drain(context: context)
            context.flush()
        }
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
        let shouldRead = turn != .waiting && waiting.isEmpty && inFlight < limits.maximumInFlightPerConnection && context.channel.isWritable
        guard shouldRead != reading, context.channel.isActive else { return }
        reading = shouldRead
        context.channel.setOption(ChannelOptions.autoRead, value: shouldRead).whenComplete { _ in }
    }

    /// Resolves one frame; the caller took a slot of the client's in-flight budget for it.
    private func resolve(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        guard let query = queryContext else {
            clientInFlight.release(budgetKey)
            return
        }
        let started = shard == nil ? 0 : NIODeadline.now().uptimeNanoseconds
        let resolution = frame.withUnsafeReadableBytes { raw in
            chain.resolve(packet: raw, client: client, transport: .tcp, in: query)
        }
        if case .later = resolution {} else { clientInFlight.release(budgetKey) }
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
                handler.clientInFlight.release(handler.budgetKey)
                handler.pending.decrement()
                let reply = (try? result.get()) ?? LaterReply(ServerFailure.reply(for: pending))
                handler.write(reply.bytes, context: context)
                handler.shard?.record(reply.blocked ? .blocked : route, reply: reply.bytes, since: started)
                // Answered while resolving (already cached): the drain goes on and flushes after.
                // Otherwise one upstream answer may complete thousands of queries at once, on
                // every connection of the loop: each only queues its reply here.
                guard !handler.draining else { return }
                handler.noteActivity(context: context)
                handler.queueServe(context: context)
            }
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 2)
        buffer.writeDNSFrame(bytes)
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// A query read or answered: for the idle timer, and for the registry's choice of whom to evict.
    private func noteActivity(context: ChannelHandlerContext) {
        lastActivity = context.eventLoop.now
        slot?.touch(NIODeadline.now().uptimeNanoseconds)
    }

    /// Arms the idle timer if it is not: it fires `idleTimeout` after the last activity.
    private func armIdleTimer(context: ChannelHandlerContext) {
        guard idleTimer == nil else { return }
        scheduleIdleCheck(at: lastActivity + limits.idleTimeout, context: context)
    }

    private func scheduleIdleCheck(at deadline: NIODeadline, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.idleTimer = nil
            let due = handler.lastActivity + handler.limits.idleTimeout
            // Answers still owed keep the connection open; it is looked at again a timeout later.
            if handler.inFlight > 0 || !handler.waiting.isEmpty {
                handler.scheduleIdleCheck(at: max(due, context.eventLoop.now + handler.limits.idleTimeout), context: context)
            } else if due > context.eventLoop.now {
                handler.scheduleIdleCheck(at: due, context: context)
            } else {
                context.close(promise: nil)
            }
        }
    }
}

extension TCPQueryHandler {
    /// Ahead of the frame decoder: notes whether each read filled its buffer (`readBytes`), which
    /// tells a client that pipelines from one that asks and waits (`TCPTurns`).
    final class ReadMeter: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        let handler: TCPQueryHandler

        init(_ handler: TCPQueryHandler) { self.handler = handler }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            handler.lastReadFull = unwrapInboundIn(data).readableBytes >= TCPQueryHandler.readBytes
            handler.lastReadAt = context.eventLoop.now
            context.fireChannelRead(data)
        }
    }
}
