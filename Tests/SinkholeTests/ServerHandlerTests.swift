import DNSFraming
import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// The UDP and TCP handlers on an embedded channel (RFC 7766: framing, pipelining, idle timeout,
/// connection bound).
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

    @Test func udp_reply_goes_back_to_the_sender() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(UDPQueryHandler(chain: try Self.chain()))
        let client = try SocketAddress(ipAddress: "192.0.2.7", port: 5555)
        var buffer = channel.allocator.buffer(capacity: 64)
        buffer.writeBytes(try Packet.query("www.blocked.test", id: 99))
        try channel.writeInbound(AddressedEnvelope(remoteAddress: client, data: buffer))
        let reply = try #require(try channel.readOutbound(as: AddressedEnvelope<ByteBuffer>.self))
        #expect(reply.remoteAddress == client)
        let message = try DNSMessage(parsing: Array(reply.data.readableBytesView))
        #expect(message.header.id == 99)
        #expect(message.answers.first?.rdata == .a(.any))
        // A response packet gets nothing back.
        var response = channel.allocator.buffer(capacity: 64)
        var bytes = try Packet.query("x.test")
        bytes[2] |= 0x80
        response.writeBytes(bytes)
        try channel.writeInbound(AddressedEnvelope(remoteAddress: client, data: response))
        #expect(try channel.readOutbound(as: AddressedEnvelope<ByteBuffer>.self) == nil)
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
