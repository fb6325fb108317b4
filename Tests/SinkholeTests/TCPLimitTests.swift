import DNSFraming
import DNSWire
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
@testable import Sinkhole

/// The bounds of one DNS-over-TCP connection on an embedded channel (SPEC §9): queries in flight
/// counted as frames are decoded, replies the client does not read, connections per client.
@Suite struct TCPLimitTests {
    /// Answers every query later, when the test says so: an upstream that takes its time.
    final class HeldAnswers: ResolverLink, @unchecked Sendable {
        private let held = Mutex<[(EventLoopPromise<LaterReply>, [UInt8])]>([])

        func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
            let promise = context.eventLoop.makePromise(of: LaterReply.self)
            var reply = Array(context.packet)
            reply[2] |= 0x80
            held.withLock { $0.append((promise, reply)) }
            return .later(promise.futureResult)
        }

        var count: Int { held.withLock { $0.count } }

        /// Completes the first `n` queries still held.
        func answer(_ n: Int) {
            let taken = held.withLock { list in
                let first = Array(list.prefix(n))
                list.removeFirst(min(n, list.count))
                return first
            }
            for (promise, reply) in taken { promise.succeed(LaterReply(reply)) }
        }
    }

    static func channel(
        _ link: any ResolverLink, limits: TCPLimits, counter: ConnectionCounter = ConnectionCounter(limit: 10),
        from address: String = "127.0.0.1", clientInFlight: ClientInFlight? = nil, loop: EmbeddedEventLoop = EmbeddedEventLoop()
    ) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(
            TCPQueryHandler(chain: ResolverChain(links: [QueryGateLink(), link]), limits: limits, counter: counter,
                            clientInFlight: clientInFlight))
        try channel.connect(to: SocketAddress(ipAddress: address, port: 4000)).wait()
        return channel
    }

    /// Whether the handler has the connection read (EmbeddedChannel reports autoRead as always on).
    static func reading(_ channel: EmbeddedChannel) throws -> Bool {
        try channel.pipeline.syncOperations.handler(type: TCPQueryHandler.self).reading
    }

    static func queries(_ count: Int) throws -> ByteBuffer {
        ServerHandlerTests.framed(try (0..<count).map { try Packet.query("q\($0).example", id: UInt16($0)) })
    }

    @Test func frames_already_decoded_past_the_in_flight_bound_wait_instead_of_going_upstream() throws {
        let upstream = HeldAnswers()
        let channel = try Self.channel(upstream, limits: TCPLimits(maximumInFlightPerConnection: 4))
        // 100 queries in one segment: the decoder hands over all of them at once.
        try channel.writeInbound(try Self.queries(100))
        #expect(upstream.count == 4)
        #expect(try Self.reading(channel) == false, "a connection at its bound is not read")
        upstream.answer(1)
        // An answer queues its reply; the connection is served again on the loop's next turn.
        channel.embeddedEventLoop.run()
        #expect(upstream.count == 4, "one answered, one more let through")
        var rounds = 0
        while upstream.count > 0, rounds < 100 {
            #expect(upstream.count <= 4)
            upstream.answer(upstream.count)
            channel.embeddedEventLoop.run()
            rounds += 1
        }
        #expect(Set(try ServerHandlerTests.readReplies(channel).map(\.header.id)) == Set((0..<100).map(UInt16.init)))
        #expect(try Self.reading(channel))
    }

    @Test func a_client_with_several_connections_has_one_in_flight_budget() throws {
        let upstream = HeldAnswers()
        let limits = TCPLimits(maximumInFlightPerConnection: 4, maximumInFlightPerClient: 6)
        let budget = ClientInFlight(limit: .max, perKeyLimit: 6)
        let loop = EmbeddedEventLoop()
        let first = try Self.channel(upstream, limits: limits, clientInFlight: budget, loop: loop)
        let second = try Self.channel(upstream, limits: limits, clientInFlight: budget, loop: loop)
        let other = try Self.channel(upstream, limits: limits, from: "192.0.2.9", clientInFlight: budget, loop: loop)
        try first.writeInbound(try Self.queries(10))
        try second.writeInbound(try Self.queries(10))
        #expect(upstream.count == 6, "4 from the first connection, 2 from the second")
        try other.writeInbound(try Self.queries(10))
        #expect(upstream.count == 10, "another client has its own budget")
        upstream.answer(1) // the first connection's oldest
        loop.advanceTime(by: .milliseconds(20))
        #expect(upstream.count == 10, "the freed slot went to one of the client's connections")
        #expect(try ServerHandlerTests.readReplies(first).count == 1)
    }

    @Test func a_client_that_reads_no_replies_is_not_served_or_read_and_is_closed_after_the_idle_timeout() throws {
        let channel = try ServerHandlerTests.tcpChannel(limits: TCPLimits(idleTimeout: .seconds(10)), counter: ConnectionCounter(limit: 10))
        try channel.writeInbound(ServerHandlerTests.framed([try Packet.query("a.blocked.test", id: 1)]))
        #expect(try ServerHandlerTests.readReplies(channel).count == 1)
        // The client's window is full: NIO's unsent bytes passed the water mark.
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(try Self.reading(channel) == false)
        for second in 1...9 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            try channel.writeInbound(ServerHandlerTests.framed([try Packet.query("b.blocked.test", id: UInt16(100 + second))]))
        }
        #expect(try ServerHandlerTests.readReplies(channel).isEmpty, "nothing is resolved for a client that reads nothing")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive, "queries did not restart the idle clock while the replies were stuck")
    }

    @Test func replies_resume_when_the_client_reads_again() throws {
        let channel = try ServerHandlerTests.tcpChannel(limits: TCPLimits(idleTimeout: .seconds(10)), counter: ConnectionCounter(limit: 10))
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        try channel.writeInbound(ServerHandlerTests.framed([try Packet.query("a.blocked.test", id: 7), try Packet.query("c.blocked.test", id: 8)]))
        #expect(try ServerHandlerTests.readReplies(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(try ServerHandlerTests.readReplies(channel).map(\.header.id) == [7, 8])
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive, "the stall timer was cancelled")
        #expect(try Self.reading(channel))
    }

    @Test func one_client_address_gets_its_share_of_connections_and_another_still_gets_in() throws {
        let counter = ConnectionCounter(limit: 10, perKeyLimit: 2)
        let link = HeldAnswers()
        let first = try Self.channel(link, limits: TCPLimits(), counter: counter)
        let second = try Self.channel(link, limits: TCPLimits(), counter: counter)
        let third = try Self.channel(link, limits: TCPLimits(), counter: counter)
        let other = try Self.channel(link, limits: TCPLimits(), counter: counter, from: "192.0.2.9")
        #expect(first.isActive && second.isActive)
        #expect(!third.isActive)
        #expect(other.isActive)
        _ = try first.close().wait()
        #expect(counter.current(for: ClientAddress(try SocketAddress(ipAddress: "127.0.0.1", port: 1))) == 1)
        #expect(try Self.channel(link, limits: TCPLimits(), counter: counter).isActive)
    }

    @Test func total_bound_holds_across_clients() {
        let slots = ConnectionSlots<Int>(limit: 3, perKeyLimit: 2)
        #expect(slots.acquire(1) == nil)
        #expect(slots.acquire(1) == nil)
        #expect(slots.acquire(1) == .perKey(limit: 2))
        #expect(slots.acquire(2) == nil)
        #expect(slots.acquire(3) == .total(limit: 3))
        slots.release(1)
        #expect(slots.acquire(3) == nil)
        #expect(slots.current == 3)
    }

    @Test func a_full_registry_evicts_the_longest_idle_connection_of_the_largest_holder_only_when_fair() throws {
        let fixture = RegistryFixture(limit: 4, perKeyLimit: 3)
        let registry = fixture.registry
        let big = ClientAddress.v4(1), small = ClientAddress.v4(2), newcomer = ClientAddress.v4(3)
        for (now, tag) in [(30, 1), (10, 2), (20, 3)] {
            guard case .admitted = fixture.admit(big, at: UInt64(now), tag: tag) else { Issue.record("big \(tag) refused"); return }
        }
        guard case .admitted = fixture.admit(small, at: 5, tag: 4) else { Issue.record("small refused"); return }
        // Full: the newcomer takes the slot of `big`'s longest-idle connection (idle since 10).
        guard case .admitted(_, let evicted) = fixture.admit(newcomer, at: 40, tag: 5) else { Issue.record("newcomer refused"); return }
        #expect(evicted?.client == big)
        #expect(fixture.closed.withLock { $0 } == [2])
        #expect(registry.current == 4 && registry.current(for: big) == 2)
        // `big` still holds two, more than one more than a newcomer: its next longest-idle goes.
        guard case .admitted = fixture.admit(.v4(4), at: 50, tag: 6) else { Issue.record("second newcomer refused"); return }
        #expect(fixture.closed.withLock { $0 } == [2, 3])
        // Everyone holds one: evicting would only trade places, so the next is refused.
        guard case .refused(.total(limit: 4)) = fixture.admit(.v4(5), at: 60, tag: 7) else { Issue.record("evicted unfairly"); return }
        #expect(fixture.closed.withLock { $0 } == [2, 3])
        // The evicted connection's own close gives back nothing twice.
        if let evicted { registry.release(evicted) }
        #expect(registry.current == 4)
    }

    @Test func a_full_registry_drops_the_longest_stalled_connection_first() throws {
        let fixture = RegistryFixture(limit: 3, perKeyLimit: 3)
        let registry = fixture.registry
        let slow = ClientAddress.v4(1), other = ClientAddress.v4(2), newcomer = ClientAddress.v4(3)
        for (client, tag) in [(other, 1), (slow, 2), (slow, 3)] {
            guard case .admitted = fixture.admit(client, at: UInt64(10 * tag), tag: tag) else { Issue.record("\(tag) refused"); return }
        }
        // `slow`'s second connection stops taking its replies at 40, its first at 50.
        fixture.entries[3]?.stalled(40)
        fixture.entries[2]?.stalled(50)
        // Full: the newcomer takes the slot of the connection stalled longest, although `other`'s
        // connection has been idle longer and no address holds an unfair share.
        guard case .admitted(_, let evicted) = fixture.admit(newcomer, at: 70, tag: 5) else { Issue.record("newcomer refused"); return }
        #expect(evicted === fixture.entries[3])
        #expect(fixture.closed.withLock { $0 } == [3])
        // Reading again clears it: then the fairness rule alone decides, and nobody holds more.
        fixture.entries[2]?.stalled(nil)
        guard case .refused(.total(limit: 3)) = fixture.admit(slow, at: 80, tag: 6) else { Issue.record("expected a refusal for the total"); return }
        #expect(registry.current == 3 && registry.current(for: slow) == 1)
    }

    @Test func a_slow_readers_reconnect_does_not_displace_a_stalled_connection_of_an_address_holding_as_many() throws {
        let fixture = RegistryFixture(limit: 4, perKeyLimit: 3)
        let registry = fixture.registry
        let a = ClientAddress.v4(1), b = ClientAddress.v4(2), other = ClientAddress.v4(3)
        // Two slow-reader addresses, two connections each, every one stalled.
        for (client, tag) in [(a, 1), (a, 2), (b, 3), (b, 4)] {
            guard case .admitted = fixture.admit(client, at: UInt64(10 * tag), tag: tag) else { Issue.record("\(tag) refused"); return }
            fixture.entries[tag]?.stalled(UInt64(100 + tag))
        }
        // `a` reconnects (it holds two, as many as `b`): refused, nothing closed. Displacing
        // `b`'s stalled connection would only start another one to be answered until it stalls.
        guard case .refused(.total(limit: 4)) = fixture.admit(a, at: 200, tag: 5) else { Issue.record("a displaced a stalled connection"); return }
        #expect(fixture.closed.withLock { $0 }.isEmpty)
        // Another client with no connection takes the longest-stalled one's slot.
        guard case .admitted(_, let evicted) = fixture.admit(other, at: 210, tag: 6) else { Issue.record("the other client was refused"); return }
        #expect(evicted === fixture.entries[1])
        #expect(fixture.closed.withLock { $0 } == [1])
    }
}

/// A registry whose close callbacks record each connection's tag, and the entry admitted for each
/// tag, so a test can stall entries and see which ones a newcomer displaced.
final class RegistryFixture {
    /// The tags closed so far, in order (the close callbacks may run on any thread).
    final class Tags: Sendable {
        private let value = Mutex<[Int]>([])
        func withLock<T>(_ body: (inout [Int]) -> T) -> T { value.withLock { body(&$0) } }
    }

    let registry: TCPConnectionRegistry
    let closed = Tags()
    var entries: [Int: TCPConnectionEntry] = [:]

    init(limit: Int, perKeyLimit: Int) {
        registry = TCPConnectionRegistry(limit: limit, perKeyLimit: perKeyLimit)
    }

    func admit(_ client: ClientAddress, at now: UInt64, tag: Int) -> TCPConnectionRegistry.Admission {
        let closed = closed
        let admission = registry.admit(client, now: now, close: { closed.withLock { $0.append(tag) } })
        if case .admitted(let entry, _) = admission { entries[tag] = entry }
        return admission
    }
}
