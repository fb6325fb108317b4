import DNSFraming
import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// What a DNS-over-TCP client that pipelines and reads nothing may cost (SPEC §9.6): the loop's
/// budget of pipelined answers, and the client it is counted as.
@Suite struct TCPSlowReaderBoundsTests {
    static func channel(budget: PipelinedAnswerBudget, loop: EmbeddedEventLoop, from address: String = "127.0.0.1") throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(
            TCPQueryHandler(chain: try ServerHandlerTests.chain(), limits: TCPLimits(), counter: ConnectionCounter(limit: 10), answerBudget: budget))
        try channel.connect(to: SocketAddress(ipAddress: address, port: 4000)).wait()
        return channel
    }

    static func blocked(_ count: Int, from first: Int = 0) throws -> ByteBuffer {
        ServerHandlerTests.framed(try (first..<first + count).map { try Packet.query("blocked.test", id: UInt16($0)) })
    }

    @Test func pipelined_queries_past_the_loops_budget_wait_unread_while_a_single_query_is_answered_at_once() throws {
        let loop = EmbeddedEventLoop()
        // 100 a second: 8 at once (the least burst), then one every 10 ms.
        let budget = PipelinedAnswerBudget(perSecond: 100, loop: loop)
        let flood = try Self.channel(budget: budget, loop: loop, from: "192.0.2.10")
        try flood.writeInbound(try Self.blocked(40))
        #expect(try ServerHandlerTests.readReplies(flood).count == 8)
        #expect(try !TCPLimitTests.reading(flood), "a connection with pipelined queries waiting for the budget is not read")

        // Another client's one question at a time costs no token: answered at once, each time.
        let other = try Self.channel(budget: budget, loop: loop, from: "192.0.2.20")
        for id in 100..<103 {
            try other.writeInbound(try Self.blocked(1, from: id))
            #expect(try ServerHandlerTests.readReplies(other).map(\.header.id) == [UInt16(id)])
        }

        // 100 ms later the flood has 10 more, in order, and is still not read.
        loop.advanceTime(by: .milliseconds(100))
        #expect(try ServerHandlerTests.readReplies(flood).map(\.header.id) == (8..<18).map(UInt16.init))
        #expect(try !TCPLimitTests.reading(flood))
        // And all of them in time, then it is read again.
        loop.advanceTime(by: .seconds(1))
        #expect(try ServerHandlerTests.readReplies(flood).count == 22)
        #expect(try TCPLimitTests.reading(flood))
    }

    @Test func ipv6_connections_count_by_their_64_and_ipv4_mapped_ones_as_ipv4() throws {
        let registry = TCPConnectionRegistry(limit: 100, perKeyLimit: 2)
        let admission = TCPAdmission(registry: registry, limitLog: nil)
        let loop = EmbeddedEventLoop()
        func admitted(_ address: String) throws -> Bool {
            let channel = EmbeddedChannel(loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: address, port: 4000)).wait()
            return admission.admit(channel)
        }
        // One host picks any address of its /64: three addresses are one client with two connections.
        #expect(try admitted("2001:db8:0:1::1"))
        #expect(try admitted("2001:db8:0:1:aaaa::2"))
        #expect(try !admitted("2001:db8:0:1:ffff:ffff:ffff:3"))
        // The next /64 is another device.
        #expect(try admitted("2001:db8:0:2::1"))
        // 192.0.2.1 reaching a dual-stack socket as ::ffff:192.0.2.1 is the same client.
        #expect(try admitted("192.0.2.1"))
        #expect(try admitted("::ffff:192.0.2.1"))
        #expect(try !admitted("192.0.2.1"))
        #expect(registry.current(for: .v6(high: 0x2001_0db8_0000_0001, low: 0)) == 2)
    }
}
