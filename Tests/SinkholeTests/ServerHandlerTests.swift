import DNSFraming
import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// The TCP handler on an embedded channel (RFC 7766: framing, pipelining, idle timeout, connection
/// bound). The UDP listener runs on real sockets: `DatagramListenerTests`.
@Suite struct ServerHandlerTests {
    static func chain() throws -> ResolverChain {
        ResolverChain(links: [
            QueryGateLink(),
            PolicyLink(policies: PolicyStore(try TablePolicy(blocked: ["blocked.test"])), blocking: BlockingSettingsStore(mode: .null)),
        ])
    }

    static func tcpChannel(limits: TCPLimits = TCPLimits(), counter: ConnectionCounter) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(TCPQueryHandler(chain: try chain(), limits: limits, counter: counter))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4000)).wait()
        return channel
    }

    static func framed(_ packets: [[UInt8]]) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: 512)
        for packet in packets { buffer.writeDNSFrame(packet) }
        return buffer
    }

    static func readReplies(_ channel: EmbeddedChannel) throws -> [DNSMessage] {
        var replies: [DNSMessage] = []
        var stream = ByteBufferAllocator().buffer(capacity: 512)
        while var chunk = try channel.readOutbound(as: ByteBuffer.self) { stream.writeBuffer(&chunk) }
        while let frame = DNSFrameDecoder.nextFrame(&stream) {
            replies.append(try DNSMessage(parsing: Array(frame.readableBytesView)))
        }
        return replies
    }

    @Test func tcp_pipelined_queries_in_one_segment_get_one_reply_each() throws {
        let channel = try Self.tcpChannel(counter: ConnectionCounter(limit: 10))
        try channel.writeInbound(Self.framed([
            try Packet.query("a.blocked.test", id: 1),
            try Packet.query("b.blocked.test", .aaaa, id: 2),
            try Packet.query("c.blocked.test", .mx, id: 3),
        ]))
        let replies = try Self.readReplies(channel)
        #expect(replies.map(\.header.id) == [1, 2, 3])
        #expect(replies[1].answers.first?.rdata == .aaaa(.any))
        #expect(channel.isActive)
    }

    @Test func tcp_connection_idle_for_the_timeout_is_closed() throws {
        let channel = try Self.tcpChannel(limits: TCPLimits(idleTimeout: .seconds(10)), counter: ConnectionCounter(limit: 10))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        try channel.writeInbound(Self.framed([try Packet.query("a.blocked.test")]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive, "a query restarts the idle clock")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func tcp_connections_over_the_bound_are_closed_at_once() throws {
        let counter = ConnectionCounter(limit: 1)
        let first = try Self.tcpChannel(counter: counter)
        let second = try Self.tcpChannel(counter: counter)
        #expect(first.isActive)
        #expect(!second.isActive)
        _ = try first.close().wait()
        #expect(counter.current == 0)
        let third = try Self.tcpChannel(counter: counter)
        #expect(third.isActive)
    }
}
