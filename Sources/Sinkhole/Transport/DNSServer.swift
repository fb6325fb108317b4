import CThreadShim
import DNSFraming
import DNSWire
import Logging
import NIOCore
import NIOPosix
import PortDiagnostics
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Everything the server needs to run.
public struct DNSServerConfiguration: Sendable {
    public var listen: [HostPort]
    public var tcp: TCPLimits
    /// Datagrams read per `recvmmsg` call (`DatagramListener`).
    public var vectorReadCount: Int
    /// On SIGTERM, how long questions already sent upstream may take to be answered.
    public var drainTimeout: TimeAmount
    /// Where queries are counted for the metrics endpoint; nil (the default) counts nothing.
    public var counters: QueryCounters?
    /// Runs first on each UDP listener's thread and on the TCP listeners' accept thread: the helper
    /// gives them the event loops' scheduling.
    public var prepareListenerThread: @Sendable () -> Void = {}

    public init(listen: [HostPort], tcp: TCPLimits = TCPLimits(), vectorReadCount: Int = 32, drainTimeout: TimeAmount = .seconds(5)) {
        self.listen = listen
        self.tcp = tcp
        self.vectorReadCount = max(vectorReadCount, 1)
        self.drainTimeout = drainTimeout
    }
}

/// The UDP and TCP listeners of every `--listen` address, as one service of the helper's group.
///
/// UDP gets one socket per event loop on the same port (SO_REUSEPORT), so the kernel spreads
/// queries over all cores, each read by a thread of its own (`DatagramListener`); TCP has one
/// listening socket whose connections are spread over the loops.
///
/// The TCP listening sockets are served by an event loop of their own (the thread
/// `scrolloff-tcp`), which only accepts: the connections live on the shared loops. Slow readers
/// from ten addresses pipelining queries kept the shared loops busy answering them, and a
/// listener there accepted four connections per turn, 16–30 a second, while their reconnects
/// filled the kernel's accept queue: another client's new connection waited there past its
/// 2 s deadline. Accepting now never waits behind answering, and connections are admitted,
/// refused or displaced there too (`TCPAdmission`).
public final class DNSServer: Service {
    public let configuration: DNSServerConfiguration
    let chain: ResolverChain
    let group: any EventLoopGroup
    let logger: Logger
    let counter: ConnectionCounter
    /// Descriptors the TCP listeners' connections hold, bounded at accept (`AcceptGate`).
    let acceptGate: AcceptGate
    let pending = InFlightCounter()
    /// Refused connections and accept failures, logged once a minute rather than once each.
    let limitLog: ThrottledLog
    let clientInFlight: ClientInFlight
    /// Each event loop's turns of the connections of one client (`TCPTurns`).
    let turnTable = TCPTurnTable()
    /// Called with each bound address (`listening udp 127.0.0.1:5300`) before serving.
    let announce: @Sendable (String) -> Void
    /// Called once every listener is bound, with the addresses as bound (port 0 resolved).
    let ready: @Sendable ([HostPort]) -> Void
    /// Where the bound sockets are published for `doctor`; nil when nobody asks.
    let bound: BoundListeners?

    public init(
        configuration: DNSServerConfiguration, chain: ResolverChain, group: any EventLoopGroup, logger: Logger,
        announce: @escaping @Sendable (String) -> Void = { _ in },
        ready: @escaping @Sendable ([HostPort]) -> Void = { _ in }, bound: BoundListeners? = nil
    ) {
        self.configuration = configuration
        self.chain = chain
        self.group = group
        self.logger = logger
        counter = ConnectionCounter(limit: configuration.tcp.maximumConnections, perKeyLimit: configuration.tcp.maximumConnectionsPerClient)
        acceptGate = AcceptGate(cap: configuration.tcp.maximumConnections)
        limitLog = ThrottledLog(logger: logger)
        clientInFlight = ClientInFlight(limit: .max, perKeyLimit: configuration.tcp.maximumInFlightPerClient)
        self.announce = announce
        self.ready = ready
        self.bound = bound
    }

    public func run() async throws {
        var datagramListeners: [(listener: DatagramListener, loop: any EventLoop)] = []
        var listeners: [any Channel] = []
        var addresses: [HostPort] = []
        let acceptLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let prepareAcceptThread = configuration.prepareListenerThread
        try? await acceptLoop.next().submit {
            _ = scrolloff_name_thread("scrolloff-tcp")
            prepareAcceptThread()
        }.get()
        do {
            for address in configuration.listen {
                let (udp, tcp, port) = try await bind(address, acceptLoop: acceptLoop)
                datagramListeners += udp
                listeners.append(tcp)
                let shown = HostPort(host: address.host, port: port)
                addresses.append(shown)
                announce("listening udp \(shown)")
                announce("listening tcp \(shown)")
                bound?.add(BoundListener(transport: .udp, address: shown))
                bound?.add(BoundListener(transport: .tcp, address: shown))
                logger.info("listening", metadata: ["listen.address": "\(shown)", "event.loops": "\(udp.count)"])
            }
        } catch {
            bound?.removeAll()
            for (listener, _) in datagramListeners { listener.close() }
            for channel in listeners { try? await channel.close() }
            try? await acceptLoop.shutdownGracefully()
            throw error
        }
        // One thread per UDP socket, each blocking in `recvmmsg` (see `DatagramListener` for why
        // these are not NIO channels); each is paired with the event loop its socket was bound for,
        // where answers that wait for an upstream complete.
        let threads = NIOThreadPool(numberOfThreads: max(datagramListeners.count, 1))
        threads.start()
        var serving: [EventLoopFuture<Void>] = []
        var reading: [EventLoopFuture<Void>] = []
        for (listener, loop) in datagramListeners {
            let chain = chain
            let pending = pending
            let counters = configuration.counters
            let log = limitLog
            let prepare = configuration.prepareListenerThread
            let started = loop.makePromise(of: Void.self)
            reading.append(started.futureResult)
            let served = threads.runIfActive(eventLoop: loop) {
                prepare()
                listener.serve(chain: chain, loop: loop, pending: pending, counters: counters, log: log, started: { started.succeed() })
            }
            // A pool that is not running never starts the thread: nobody may wait for it then.
            served.whenFailure { started.fail($0) }
            serving.append(served)
        }
        // Ready only once every listener's thread reads its socket (and carries its name and
        // scheduling, which `doctor` and the tests look at).
        for thread in reading { try? await thread.get() }
        ready(addresses)
        // Serve until SIGTERM/SIGINT. Then drain: stop reading new queries and accepting
        // connections, give questions already sent upstream up to `drainTimeout` to be answered,
        // and only then close the sockets their answers leave by.
        try? await gracefulShutdown()
        logger.info("draining", metadata: ["queries.in_flight": "\(pending.current)"])
        bound?.removeAll()
        for listener in listeners { try? await listener.close() }
        for (listener, _) in datagramListeners { listener.stop() }
        for thread in serving { try? await thread.get() }
        let deadline = NIODeadline.now() + configuration.drainTimeout
        while pending.current > 0, NIODeadline.now() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        logger.info("stopping listeners")
        for (listener, _) in datagramListeners { listener.close() }
        try? await threads.shutdownGracefully()
        try? await acceptLoop.shutdownGracefully()
    }

    /// Binds UDP once per loop and TCP once, all on one port. With port 0 the first UDP socket
    /// picks it; if TCP cannot have the same port, everything is retried on a new one, since clients
    /// retry over TCP on the port they used for UDP.
    private func bind(_ address: HostPort, acceptLoop: any EventLoopGroup) async throws -> (udp: [(listener: DatagramListener, loop: any EventLoop)], tcp: any Channel, port: Int) {
        let attempts = address.port == 0 ? 20 : 1
        var failure: (transport: DNSTransport, error: any Error)?
        for _ in 0..<attempts {
            var bound: [(listener: DatagramListener, loop: any EventLoop)] = []
            var transport = DNSTransport.udp
            do {
                var port = address.port
                for loop in group.makeIterator() {
                    let listener = try DatagramListener.bind(
                        HostPort(host: address.host, port: port), receiveBufferBytes: 4 << 20, batchSize: configuration.vectorReadCount)
                    bound.append((listener, loop))
                    if port == 0 { port = listener.port }
                }
                transport = .tcp
                let tcp = try await bindTCP(HostPort(host: address.host, port: port), acceptLoop: acceptLoop)
                return (bound, tcp, port)
            } catch {
                failure = (transport, error)
                for (listener, _) in bound { listener.close() }
            }
        }
        // Say who holds the port and how to free it, not just "address in use" (SPEC §13: errors say what to do).
        guard let failure else {
            throw ListenError(address: address, transport: .udp, cause: .other("no event loop to bind on"))
        }
        throw ListenError.diagnose(address: address, transport: failure.transport, error: failure.error)
    }

    private func bindTCP(_ address: HostPort, acceptLoop: any EventLoopGroup) async throws -> any Channel {
        let chain = chain
        let limits = configuration.tcp
        let counter = counter
        let pending = pending
        let counters = configuration.counters
        let limitLog = limitLog
        let clientInFlight = clientInFlight
        let acceptGate = acceptGate
        let turnTable = turnTable
        let admission = TCPAdmission(registry: counter, limitLog: limitLog)
        return try await ServerBootstrap(group: acceptLoop, childGroup: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(ChannelOptions.backlog, value: 128)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // No accepting past the connections' descriptors (SPEC §9.6).
                    try channel.pipeline.syncOperations.addHandler(acceptGate.handler())
                    // Slots are given, refused and taken back here, not on the busy child loops.
                    try channel.pipeline.syncOperations.addHandler(admission.handler())
                    // Out of descriptors all the same: say so once, then wait a second between accepts.
                    try channel.pipeline.syncOperations.addHandler(AcceptFailureLogger(log: limitLog, listener: "dns tcp \(address)"))
                    try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: false))
                }
            }
            // TCP_NODELAY lives at IPPROTO_TCP. The generic socket option for `.tcp_nodelay` sets
            // option 1 at SOL_SOCKET, which is SO_DEBUG: it needs CAP_NET_ADMIN, so without it every
            // accepted connection failed its set-up and was reset (SPEC §9.6).
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            // Replies the client has not read fill the kernel's send buffer (`maximumUnsentBytes`),
            // then at most `queuedReplyBytes` here (a turn's replies, not 64 KiB more): past it the
            // channel turns unwritable and the handler stops reading the connection.
            // A fixed kernel send buffer: with the kernel's autotuning it kept
            // growing for a client that read nothing, so the connection turned writable again
            // every second and was never found stalled. 64 KiB in flight is plenty for DNS.
            // (16 KiB was tried against slow readers: no better p99, a worse p50; docs/benchmarks.md.)
            .childChannelOption(ChannelOptions.socketOption(.so_sndbuf), value: limits.maximumUnsentBytes)
            // Work per connection per turn of the event loop is what one read hands over. NIO's
            // default, four reads of up to 64 KiB, is 131,072 empty frames: one connection
            // sending them kept its loop, and the UDP listener it may serve, busy for seconds and
            // other clients' UDP queries timed out. One read of at most 128 bytes a turn (about
            // four typical queries, as unbound reads one) lets every channel of the loop have its
            // turn: with 4 KiB, slow readers' 256 pipelining connections made a turn ~30,000
            // answers long and another client's p99 435 ms (docs/benchmarks.md, "Slow DNS-over-TCP readers").
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 1)
            .childChannelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: TCPQueryHandler.readBytes))
            .childChannelOption(
                ChannelOptions.writeBufferWaterMark,
                value: ChannelOptions.Types.WriteBufferWaterMark(low: max(limits.queuedReplyBytes / 2, 1), high: max(limits.queuedReplyBytes, 2)))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = TCPQueryHandler(
                        chain: chain, limits: limits, counter: counter, pending: pending, counters: counters, limitLog: limitLog,
                        clientInFlight: clientInFlight, slot: admission.take(for: channel), turns: turnTable.turns(for: channel.eventLoop))
                    try channel.pipeline.syncOperations.addHandler(TCPQueryHandler.ReadMeter(handler))
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: address.host, port: address.port)
            .get()
    }
}
