import DNSWire
import Logging
import NIOCore
import NIOPosix
import Dispatch
import Synchronization
import Testing
@testable import Sinkhole

#if canImport(Glibc)
import Glibc
#endif

/// The UDP listener on real loopback sockets: its own thread in `recvmmsg`, replies by `sendmmsg`,
/// answers that wait for an upstream sent from an event loop (RFC 1035 §4.2.1).
@Suite struct DatagramListenerTests {
    static func chain(extra: [any ResolverLink] = []) throws -> ResolverChain {
        ResolverChain(links: [
            QueryGateLink(),
            PolicyLink(policies: PolicyStore(try TablePolicy(blocked: ["blocked.test"])), blocking: BlockingSettingsStore(mode: .null)),
        ] + extra)
    }

    /// A listener on `host`:0 served on a pool thread; `body` gets it, the loop it is paired with,
    /// and the future of its `serve` call.
    /// Synchronous, like the listener: an async test waits for the cooperative pool, which the
    /// blocking end-to-end suites can hold for seconds while the whole suite runs.
    static func serving(
        _ chain: ResolverChain, host: String = "127.0.0.1", pending: InFlightCounter = InFlightCounter(), batchSize: Int = 32,
        _ body: (DatagramListener, any EventLoop, EventLoopFuture<Void>) throws -> Void
    ) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let threads = NIOThreadPool(numberOfThreads: 1)
        threads.start()
        defer {
            try? threads.syncShutdownGracefully()
            try? group.syncShutdownGracefully()
        }
        let loop = group.next()
        let listener = try DatagramListener.bind(HostPort(host: host, port: 0), receiveBufferBytes: 1 << 20, batchSize: batchSize)
        let log = ThrottledLog(logger: Logger(label: "test"))
        let served = threads.runIfActive(eventLoop: loop) {
            listener.serve(chain: chain, loop: loop, pending: pending, counters: nil, log: log)
        }
        defer {
            listener.stop()
            try? served.wait()
            listener.close()
        }
        try body(listener, loop, served)
    }

    /// Asks for a blocked name and checks the reply: the query's ID and the blocking answer.
    static func expectBlockedAnswer(_ client: UDPTestClient, port: Int, _ name: String, _ type: DNSType = .a, id: UInt16) throws {
        try client.send(try Packet.query(name, type, id: id), to: port)
        let reply = try Packet.parse(try #require(try client.receive()))
        #expect(reply.header.id == id)
        #expect(reply.answers.first?.rdata == (type == .aaaa ? .aaaa(.any) : .a(.any)))
    }

    @Test func blocked_name_is_answered_to_the_sender_and_a_response_packet_gets_nothing() throws {
        try Self.serving(try Self.chain()) { listener, _, _ in
            let client = try UDPTestClient(host: "127.0.0.1")
            try Self.expectBlockedAnswer(client, port: listener.port, "www.blocked.test", id: 99)
            var response = try Packet.query("x.test", id: 7)
            response[2] |= 0x80
            try client.send(response, to: listener.port)
            try client.send(try Packet.query("a.blocked.test", id: 8), to: listener.port)
            // The next datagram back is the answer to the query after it: the response got nothing.
            #expect(try Packet.parse(try #require(try client.receive())).header.id == 8)
        }
    }

    @Test func burst_of_queries_from_several_clients_gets_every_reply() throws {
        try Self.serving(try Self.chain(), batchSize: 8) { listener, _, _ in
            let clients = try (0..<4).map { _ in try UDPTestClient(host: "127.0.0.1") }
            // 4 × 50 queries sent before any is read: the listener reads them 8 at a time.
            for (number, client) in clients.enumerated() {
                for id in 0..<50 { try client.send(try Packet.query("n\(id).blocked.test", id: UInt16(number * 100 + id)), to: listener.port) }
            }
            for (number, client) in clients.enumerated() {
                var ids: [UInt16] = []
                while ids.count < 50, let bytes = try client.receive() { ids.append(try Packet.parse(bytes).header.id) }
                #expect(ids.sorted() == (0..<50).map { UInt16(number * 100 + $0) })
            }
        }
    }

    @Test func query_longer_than_a_slot_is_cut_and_refused_as_malformed_and_service_goes_on() throws {
        try Self.serving(try Self.chain()) { listener, _, _ in
            let client = try UDPTestClient(host: "127.0.0.1")
            // A well-formed query of 4,000 octets (EDNS padding, RFC 7830): whole, it is answered;
            // cut to the 2,048-octet slot, its OPT record runs past the end and the gate answers
            // FORMERR (RFC 1035 §4.1.1).
            let padding = EDNSOption(code: .padding, data: [UInt8](repeating: 0, count: 4000 - 49))
            let long = try Packet.query("big.blocked.test", id: 31, edns: EDNS(options: [padding]))
            #expect(long.count == 4000)
            #expect(try ChainHarness(try Self.chain()).run(long).map { try Packet.parse($0).rcode } == .noError)
            try client.send(long, to: listener.port)
            let reply = try Packet.parse(try #require(try client.receive()))
            #expect(reply.header.id == 31)
            #expect(reply.rcode == .formatError)
            try Self.expectBlockedAnswer(client, port: listener.port, "after.blocked.test", id: 32)
        }
    }

    @Test func ipv4_client_reaches_a_listener_on_the_ipv6_wildcard() throws {
        // IPV6_V6ONLY cleared: `[::]` serves IPv4 whatever net.ipv6.bindv6only says.
        try Self.serving(try Self.chain(), host: "::") { listener, _, _ in
            try Self.expectBlockedAnswer(try UDPTestClient(host: "127.0.0.1"), port: listener.port, "www.blocked.test", id: 71)
        }
    }

    @Test func ipv6_client_is_answered() throws {
        try Self.serving(try Self.chain(), host: "::1") { listener, _, _ in
            try Self.expectBlockedAnswer(try UDPTestClient(host: "::1"), port: listener.port, "www.blocked.test", .aaaa, id: 61)
        }
    }

    @Test func answer_that_waits_leaves_from_the_loop_and_is_counted_until_sent() throws {
        let waiting = WaitingLink()
        let pending = InFlightCounter()
        try Self.serving(try Self.chain(extra: [waiting]), pending: pending) { listener, loop, _ in
            let client = try UDPTestClient(host: "127.0.0.1")
            try client.send(try Packet.query("allowed.test", id: 41), to: listener.port)
            let promise = try waiting.nextPromise()
            // Counted once the chain has returned, just after the link handed over its promise.
            for _ in 0..<200 where pending.current != 1 { usleep(5_000) }
            #expect(pending.current == 1)
            // A blocked query after it is answered at once, while the first still waits.
            try client.send(try Packet.query("www.blocked.test", id: 42), to: listener.port)
            #expect(try Packet.parse(try #require(try client.receive())).header.id == 42)
            var reply = try Packet.query("allowed.test", id: 41)
            reply[2] |= 0x80
            loop.execute { promise.succeed(LaterReply(reply)) }
            let late = try #require(try client.receive())
            #expect(late == reply)
            // Counted down right after the send, on the loop: the client may read the reply first.
            for _ in 0..<200 where pending.current != 0 { usleep(5_000) }
            #expect(pending.current == 0)
        }
    }

    @Test func answer_that_fails_is_servfail() throws {
        let waiting = WaitingLink()
        try Self.serving(try Self.chain(extra: [waiting])) { listener, loop, _ in
            let client = try UDPTestClient(host: "127.0.0.1")
            try client.send(try Packet.query("allowed.test", id: 51), to: listener.port)
            let promise = try waiting.nextPromise()
            loop.execute { promise.fail(CacheBypassed()) }
            let reply = try Packet.parse(try #require(try client.receive()))
            #expect(reply.header.id == 51)
            #expect(reply.rcode == .serverFailure)
        }
    }

    @Test func stop_wakes_the_thread_blocked_in_receive() throws {
        try Self.serving(try Self.chain(), batchSize: 4) { listener, _, served in
            let returned = DispatchSemaphore(value: 0)
            served.whenComplete { _ in returned.signal() }
            // Answering shows the thread is in its loop; it then blocks in recvmmsg again.
            let client = try UDPTestClient(host: "127.0.0.1")
            try client.send(try Packet.query("www.blocked.test", id: 5), to: listener.port)
            #expect(try client.receive() != nil)
            usleep(50_000)
            listener.stop()
            let woken = returned.wait(timeout: .now() + 2) == .success
            #expect(woken, "stop() did not wake the thread blocked in recvmmsg")
            if !woken {
                // Any datagram wakes it; it then sees the stop. Keeps a failure from hanging the run.
                try client.send(try Packet.query("wake.test"), to: listener.port)
                _ = returned.wait(timeout: .now() + 5)
            }
            // Stopped means not reading: a query now gets no answer.
            try client.send(try Packet.query("late.blocked.test", id: 6), to: listener.port)
            #expect(try client.receive() == nil)
        }
    }

    @Test func answer_after_close_is_not_sent_even_through_a_reused_descriptor_number() throws {
        let client = try UDPTestClient(host: "127.0.0.1")
        let peer = client.address
        let open = try DatagramListener.bind(HostPort(host: "127.0.0.1", port: 0), receiveBufferBytes: 1 << 16)
        #expect(open.sendLater([1, 2, 3], to: peer) == 0)
        #expect(try client.receive() == [1, 2, 3])
        open.stop()
        #expect(open.sendLater([4], to: peer) == 0, "a stopped listener still sends the answers it owes")
        #expect(try client.receive() == [4])
        open.close()
        // The kernel hands the lowest free number to the next socket: usually the closed one. A
        // late answer must not leave through that socket (another test's thread may take the
        // number first; then try again).
        var checked = false
        for _ in 0..<20 where !checked {
            let listener = try DatagramListener.bind(HostPort(host: "127.0.0.1", port: 0), receiveBufferBytes: 1 << 16)
            listener.close()
            let reused = socket(AF_INET, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
            defer { close(reused) }
            guard reused == listener.descriptor else { continue }
            #expect(listener.sendLater([5], to: peer) == EBADF)
            checked = true
        }
        #expect(checked, "no socket reused a closed listener's descriptor number in 20 tries")
        #expect(try client.receive() == nil, "nothing went out through the reused number")
    }

    @Test func port_held_without_reuseport_is_reported_in_use() throws {
        let holder = try UDPTestClient(host: "127.0.0.1")
        #expect {
            _ = try DatagramListener.bind(HostPort(host: "127.0.0.1", port: holder.port), receiveBufferBytes: 1 << 16)
        } throws: { error in
            (error as? IOError)?.errnoCode == EADDRINUSE
        }
    }

    /// Port 0 takes SO_REUSEPORT only after its bind (so it never lands on another program's
    /// group); the next loop's socket, bound to that port by number, must still join this one's
    /// group, and the kernel then spreads clients over both.
    @Test func second_socket_on_a_port_0_listeners_port_shares_its_clients() throws {
        let first = try DatagramListener.bind(HostPort(host: "127.0.0.1", port: 0), receiveBufferBytes: 1 << 20)
        defer { first.close() }
        let second = try DatagramListener.bind(HostPort(host: "127.0.0.1", port: first.port), receiveBufferBytes: 1 << 20)
        defer { second.close() }
        let clients = try (0..<64).map { _ in try UDPTestClient(host: "127.0.0.1") }
        for (number, client) in clients.enumerated() { try client.send(try Packet.query("n\(number).test", id: UInt16(number)), to: first.port) }
        func drain(_ listener: DatagramListener) -> Int {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var count = 0
            while buffer.withUnsafeMutableBytes({ recv(listener.descriptor, $0.baseAddress, $0.count, CInt(MSG_DONTWAIT)) }) >= 0 { count += 1 }
            return count
        }
        var counts = (0, 0)
        for _ in 0..<200 where counts.0 + counts.1 < clients.count {
            counts.0 += drain(first)
            counts.1 += drain(second)
            if counts.0 + counts.1 < clients.count { usleep(5_000) }
        }
        #expect(counts.0 + counts.1 == clients.count)
        // 64 source ports all hashed to one socket: odds of 2^-63 if the two share a group.
        #expect(counts.0 > 0 && counts.1 > 0, "first \(counts.0), second \(counts.1)")
    }

    @Test func client_address_is_read_from_the_senders_sockaddr_in_host_order() throws {
        let cases: [(String, ClientAddress)] = [
            ("192.0.2.7", .v4(0xC000_0207)),
            ("2001:db8::17", .v6(high: 0x2001_0DB8_0000_0000, low: 0x17)),
            // An IPv4 client of a `::` socket arrives mapped, and is matched as IPv6 (as before).
            ("::ffff:10.0.0.1", .v6(high: 0, low: 0x0000_FFFF_0A00_0001)),
        ]
        for (host, expected) in cases {
            let address = try SocketAddress(ipAddress: host, port: 53)
            #expect(address.withSockAddr { pointer, _ in ClientAddress(pointer) } == expected, "\(host)")
        }
    }
}

/// A link that answers later: each query's promise is handed to the test, which completes it.
final class WaitingLink: ResolverLink, Sendable {
    private let promises = Mutex<[EventLoopPromise<LaterReply>]>([])

    func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        let promise = context.eventLoop.makePromise(of: LaterReply.self)
        promises.withLock { $0.append(promise) }
        return .later(promise.futureResult)
    }

    func nextPromise() throws -> EventLoopPromise<LaterReply> {
        for _ in 0..<500 {
            if let promise = promises.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return promise }
            usleep(10_000)
        }
        throw TestClientError("no query reached the waiting link in 5 s")
    }
}

struct TestClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A blocking UDP socket on loopback with a 2-second receive timeout.
final class UDPTestClient {
    let descriptor: CInt
    let host: String
    let address: DatagramPeer
    let port: Int

    init(host: String) throws {
        self.host = host
        let bindAddress = try SocketAddress(ipAddress: host, port: 0)
        let fd = socket(bindAddress.protocol.rawValue, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestClientError("socket: errno \(errno)") }
        descriptor = fd
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bound = bindAddress.withSockAddr { Glibc.bind(fd, $0, socklen_t($1)) }
        guard bound == 0 else { throw TestClientError("bind: errno \(errno)") }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { DatagramPeer($0, length: length) } }
        // sin_port and sin6_port both sit at offset 2.
        port = Int(UInt16(bigEndian: withUnsafeBytes(of: storage) { $0.loadUnaligned(fromByteOffset: 2, as: UInt16.self) }))
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8], to port: Int) throws {
        let target = try SocketAddress(ipAddress: host, port: port)
        let sent = bytes.withUnsafeBytes { raw in
            target.withSockAddr { sendto(descriptor, raw.baseAddress, raw.count, 0, $0, socklen_t($1)) }
        }
        guard sent == bytes.count else { throw TestClientError("sendto: errno \(errno)") }
    }

    /// The next datagram, or nil after 2 s without one.
    func receive() throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw TestClientError("recv: errno \(errno)")
        }
        return Array(buffer[0..<count])
    }
}
