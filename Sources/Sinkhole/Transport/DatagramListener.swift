import CDatagramShim
import CThreadShim
import DNSWire
import Logging
import NIOCore
import PortDiagnostics
import NIOConcurrencyHelpers
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The UDP side of one `--listen` address on one core: a socket of its own (SO_REUSEPORT, so the
/// kernel spreads clients over the cores by their address and port) read by a thread that blocks in
/// `recvmmsg` and answers the batch with one `sendmmsg` (RFC 1035 §4.2.1).
///
/// Why not SwiftNIO's `DatagramChannel`, which served UDP until 2026-11-25 (docs/benchmarks.md): at
/// household rates every wake-up carries one datagram, and a user-space profile at 20,000 QPS put
/// 47% of the helper's user time per query in the channel (an envelope, a `SocketAddress` with its
/// address formatted by `inet_ntop`, a `ByteBuffer` per reply, the pending-writes queue and their
/// reference counting) against 35% in the resolver chain itself: 2.3–4.2 µs of user time per query
/// against dnsmasq's 1.4, and a p50 3–4 µs over dnsmasq's in the same run. The work here is the
/// chain's and two system calls per batch, with no `epoll_wait` in front of them. TCP, the
/// upstream sockets and the timers stay on the NIO event loops; so does a question that waits for
/// an upstream: its reply leaves from the loop, through `sendLater`.
///
/// A second benefit: a TCP client can no longer hold the loop that UDP is read on.
final class DatagramListener: Sendable {
    /// The socket. It is read only by the serving thread and closed only after that thread returned
    /// (`DNSServer.run`), so the thread uses it without a lock.
    let descriptor: CInt
    /// The port as bound (port 0 resolved).
    let port: Int
    /// The receive slots, senders and staged replies of one `recvmmsg`/`sendmmsg` round. Made at
    /// bind, so that a listener that could not have them never joins the port's SO_REUSEPORT group
    /// (the kernel would send it a share of the clients that nobody reads); used only by the
    /// serving thread.
    private nonisolated(unsafe) let batch: OpaquePointer
    /// False once the socket is closed. Replies sent from an event loop take this lock, so that a
    /// late upstream answer never goes out through a descriptor number the process has reused.
    private let open = NIOLockedValueBox(true)
    private let stopping = Synchronization.Atomic(false)

    private init(descriptor: CInt, port: Int, batch: OpaquePointer) {
        self.descriptor = descriptor
        self.port = port
        self.batch = batch
    }

    deinit {
        scrolloff_datagrams_destroy(batch)
    }

    /// A socket bound to `address` with SO_REUSEPORT, blocking (the thread sleeps in `recvmmsg`,
    /// sends never wait: MSG_DONTWAIT), close-on-exec (the helper runs `nft` and `ss`), and room
    /// for `batchSize` datagrams per round.
    ///
    /// With port 0, SO_REUSEPORT is set only after the bind. Linux's choice of a free UDP port
    /// passes over no port whose sockets all have SO_REUSEPORT and the same owner
    /// (`udp_lib_lport_inuse`): set before, the socket could silently join another program's
    /// group on a port it picked and take a share of that program's queries (and it of ours).
    /// Set after, the port is one nobody holds, and the next loops' sockets, bound to it by
    /// number, still join this one's group (`udp_reuseport_add_sock` makes the group then).
    ///
    /// Errors are NIO's `IOError` with the failing call's errno, so `ListenError.diagnose` names
    /// a port's holder exactly as it did for NIO's sockets.
    static func bind(_ address: HostPort, receiveBufferBytes: Int, batchSize: Int = 32) throws -> DatagramListener {
        let socketAddress = try address.socketAddress()
        let family = socketAddress.protocol.rawValue
        let descriptor = socket(family, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        do {
            let joinsGroupAtBind = address.port != 0  // see the doc comment: port 0 joins nobody's
            if joinsGroupAtBind { try setOption(descriptor, SOL_SOCKET, SO_REUSEPORT, 1, name: "SO_REUSEPORT") }
            if family == AF_INET6 {
                // `::` takes IPv4 too, whatever net.ipv6.bindv6only says, as SwiftNIO's TCP socket
                // on the same address does (and the firewall's redirect counts on it).
                try setOption(descriptor, CInt(IPPROTO_IPV6), IPV6_V6ONLY, 0, name: "IPV6_V6ONLY")
            }
            // Room for a burst while the thread is off the core; the kernel caps it at rmem_max.
            try setOption(descriptor, SOL_SOCKET, SO_RCVBUF, CInt(clamping: receiveBufferBytes), name: "SO_RCVBUF")
            let bound = socketAddress.withSockAddr { pointer, length in Glibc.bind(descriptor, pointer, socklen_t(length)) }
            guard bound == 0 else { throw IOError(errnoCode: errno, reason: "bind(\(address))") }
            if !joinsGroupAtBind { try setOption(descriptor, SOL_SOCKET, SO_REUSEPORT, 1, name: "SO_REUSEPORT") }
            let port = try boundPort(descriptor)
            guard let batch = scrolloff_datagrams_create(UInt32(clamping: max(batchSize, 1)), Self.slotBytes, UInt32(DNSServerLimits.ednsPayloadSize))
            else { throw IOError(errnoCode: ENOMEM, reason: "buffers for \(batchSize) datagrams") }
            return DatagramListener(descriptor: descriptor, port: port, batch: batch)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    /// Each datagram's slot. A longer query is cut to it (the kernel flags it MSG_TRUNC) and the
    /// gate answers FORMERR, since its counts no longer fit: right for a stub's question, which
    /// is far shorter (RFC 1035 §4.2.1 keeps plain DNS datagrams to 512 octets).
    static let slotBytes: UInt32 = 2048

    /// Serves queries until `stop()`; runs on a thread of its own and returns when stopped.
    ///
    /// `loop` is where answers that wait for an upstream complete and leave from. `started` is
    /// called once the thread is named and about to read, so that the server says it is ready
    /// only when every listener is.
    func serve(
        chain: ResolverChain, loop: any EventLoop, pending: InFlightCounter, counters: QueryCounters?, log: ThrottledLog,
        started: () -> Void = {}
    ) {
        _ = scrolloff_name_thread("scrolloff-udp")
        let context = QueryContext(eventLoop: loop)
        // This listener's counters; nil when metrics are off, and then no clock is read either.
        let shard = counters?.shard(for: self)
        started()
        while !stopping.load(ordering: .acquiring) {
            let received = scrolloff_datagrams_receive(descriptor, batch)
            // `stop()` wakes the call through shutdown(2); what it returns then is not a query.
            if stopping.load(ordering: .acquiring) { break }
            guard received >= 0 else {
                if received == -EINTR { continue }
                log.warning("udp-receive-\(port)", "reading the DNS socket failed; trying again in 10 ms",
                            metadata: ["udp.port": "\(port)", "error.errno": "\(-received)"])
                // A failing call (ENOMEM) must not spin a core.
                usleep(10_000)
                continue
            }
            for index in 0..<UInt32(received) {
                var length: UInt32 = 0
                let bytes = scrolloff_datagrams_packet(batch, index, &length)
                var senderLength: socklen_t = 0
                guard let sender = scrolloff_datagrams_sender(batch, index, &senderLength) else { continue }
                let started = shard == nil ? 0 : NIODeadline.now().uptimeNanoseconds
                let resolution = chain.resolve(
                    packet: UnsafeRawBufferPointer(start: bytes, count: Int(length)), client: ClientAddress(sender), transport: .udp,
                    in: context)
                switch resolution {
                case .drop:
                    shard?.record(.dropped, nanoseconds: 0)
                case .builtReply:
                    let route = context.route
                    Self.lend(&context.builder) { reply in
                        stage(reply, for: index, in: batch, sender: sender, length: senderLength)
                        shard?.record(route, reply: reply, since: started)
                    }
                case .scratchReply:
                    let route = context.route
                    Self.lend(&context.scratch) { reply in
                        stage(reply, for: index, in: batch, sender: sender, length: senderLength)
                        shard?.record(route, reply: reply, since: started)
                    }
                case .later(let future):
                    answerLater(
                        future, to: DatagramPeer(sender, length: senderLength), question: context.pending, route: context.route,
                        pending: pending, shard: shard, started: started, log: log)
                case .upstream:
                    // `ResolverChain.resolve` renders upstream answers; never reached.
                    continue
                }
            }
            var error: CInt = 0
            let dropped = scrolloff_datagrams_send(descriptor, batch, &error)
            if dropped > 0 {
                log.warning("udp-send-\(port)", "replies could not be sent; their clients will ask again",
                            metadata: ["udp.port": "\(port)", "replies.dropped": "\(dropped)", "error.errno": "\(error)"])
            }
        }
    }

    /// Makes `serve` return: it is woken through shutdown(2), which Linux applies to an unconnected
    /// UDP socket too (and reports ENOTCONN for). Replies can still be sent afterwards.
    func stop() {
        stopping.store(true, ordering: .releasing)
        // Under the lock: once closed, the number may be another socket's.
        open.withLockedValue { open in
            if open { _ = shutdown(descriptor, CInt(SHUT_RD)) }
        }
    }

    /// Closes the socket. Call it once `serve` has returned.
    func close() {
        open.withLockedValue { open in
            guard open else { return }
            open = false
            Glibc.close(descriptor)
        }
    }

    /// Sends one reply from another thread (an event loop), unless the socket is closed.
    /// Returns 0 or the errno of a failed send.
    @discardableResult
    func sendLater(_ reply: [UInt8], to peer: DatagramPeer) -> CInt {
        open.withLockedValue { open -> CInt in
            guard open else { return EBADF }
            let sent = reply.withUnsafeBytes { bytes in
                peer.withSockAddr { address, length in
                    sendto(descriptor, bytes.baseAddress, bytes.count, CInt(MSG_DONTWAIT), address, length)
                }
            }
            return sent < 0 ? errno : 0
        }
    }

    /// The reply's bytes, borrowed in place: `context.builder.withUnsafeBytes` first copied the
    /// builder out of the context (a retain and a release of each of its arrays, 3% of a reply's
    /// CPU in the profile); an `inout` argument is the stored value itself.
    private static func lend(_ builder: inout DNSResponseBuilder, _ body: (UnsafeRawBufferPointer) -> Void) {
        builder.withUnsafeBytes(body)
    }

    private static func lend(_ bytes: inout [UInt8], _ body: (UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes(body)
    }

    /// Stages a reply in the batch, or sends it alone when it is larger than a reply slot.
    private func stage(
        _ reply: UnsafeRawBufferPointer, for index: UInt32, in batch: OpaquePointer, sender: UnsafePointer<sockaddr>,
        length: socklen_t
    ) {
        guard scrolloff_datagrams_stage(batch, index, reply.baseAddress, reply.count) != 0 else { return }
        // Larger than a reply slot: cannot happen for a UDP reply (the builder keeps to the client's
        // limit, at most `ednsPayloadSize`), but if it did the reply goes alone rather than cut.
        _ = sendto(descriptor, reply.baseAddress, reply.count, CInt(MSG_DONTWAIT), sender, length)
    }

    private func answerLater(
        _ future: EventLoopFuture<LaterReply>, to peer: DatagramPeer, question: PendingQuestion, route: QueryRoute,
        pending: InFlightCounter, shard: QueryCounterShard?, started: UInt64, log: ThrottledLog
    ) {
        pending.increment()
        future.whenComplete { [self] result in
            let reply = (try? result.get()) ?? LaterReply(ServerFailure.reply(for: question))
            let error = sendLater(reply.bytes, to: peer)
            // Counted down after the send: the drain at a stop closes the socket only once it is 0.
            pending.decrement()
            // EBADF: the server stopped and closed the socket before the upstream answered.
            if error != 0, error != EBADF {
                log.warning("udp-send-later-\(port)", "an upstream's answer could not be sent; its client will ask again",
                            metadata: ["udp.port": "\(port)", "error.errno": "\(error)"])
            }
            shard?.record(reply.blocked ? .blocked : route, reply: reply.bytes, since: started)
        }
    }

    /// setsockopt(2) of one integer option; `name` goes into the error, for the log.
    private static func setOption(_ descriptor: CInt, _ level: CInt, _ option: CInt, _ value: CInt, name: String) throws {
        var value = value
        guard setsockopt(descriptor, level, option, &value, socklen_t(MemoryLayout<CInt>.size)) == 0 else {
            throw IOError(errnoCode: errno, reason: "setsockopt(\(name))")
        }
    }

    /// The port the socket was given (getsockname(2)): the kernel's pick for port 0.
    private static func boundPort(_ descriptor: CInt) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { throw IOError(errnoCode: errno, reason: "getsockname") }
        return withUnsafeBytes(of: storage) { raw in
            switch CInt(raw.load(as: sockaddr.self).sa_family) {
            case AF_INET: Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
            case AF_INET6: Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            default: 0
            }
        }
    }
}

/// A client's address kept for a reply that leaves later, from an event loop.
struct DatagramPeer: Sendable {
    private var storage = sockaddr_storage()
    private let length: socklen_t

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        let kept = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        self.length = socklen_t(kept)
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: kept)) }
    }

    func withSockAddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
