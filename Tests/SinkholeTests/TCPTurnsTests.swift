import DNSFraming
import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// Connections of one client take turns on an event loop (SPEC §9.6, `TCPTurns`): a client that
/// pipelines on many connections is read and answered on one at a time, so a turn of the loop is
/// bounded by clients, not connections; a client that asks and waits is answered at once.
@Suite struct TCPTurnsTests {
    static func channel(from address: String, turns: TCPTurns, loop: EmbeddedEventLoop) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        let handler = TCPQueryHandler(chain: try ServerHandlerTests.chain(), limits: TCPLimits(), counter: ConnectionCounter(limit: 100), turns: turns)
        try channel.pipeline.syncOperations.addHandler(TCPQueryHandler.ReadMeter(handler))
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: address, port: 4000)).wait()
        return channel
    }

    /// Five blocked queries in one read: more than a read takes (`readBytes`), as a client that
    /// pipelines sends them.
    static func fullRead(_ first: Int) throws -> ByteBuffer {
        let buffer = ServerHandlerTests.framed(try (first..<first + 5).map { try Packet.query("x\($0).blocked.test", id: UInt16($0)) })
        precondition(buffer.readableBytes >= TCPQueryHandler.readBytes)
        return buffer
    }

    static func reading(_ channel: EmbeddedChannel) throws -> Bool {
        try channel.pipeline.syncOperations.handler(type: TCPQueryHandler.self).reading
    }

    @Test func a_client_pipelining_on_three_connections_is_answered_on_one_at_a_time_and_another_client_at_once() throws {
        let loop = EmbeddedEventLoop()
        let turns = TCPTurns(eventLoop: loop)
        // Three connections of one IPv6 /64 (one client) and one of another client.
        let pipelining = try ["2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1:ffff::3"].map { try Self.channel(from: $0, turns: turns, loop: loop) }
        let other = try Self.channel(from: "192.0.2.9", turns: turns, loop: loop)
        defer { for channel in pipelining + [other] { _ = try? channel.finish() } }

        for channel in pipelining { try channel.writeInbound(try Self.fullRead(0)) }
        #expect(try ServerHandlerTests.readReplies(pipelining[0]).count == 5)
        for channel in pipelining.dropFirst() {
            #expect(try ServerHandlerTests.readReplies(channel).isEmpty, "waits for its client's turn")
            #expect(try !Self.reading(channel), "and is not read meanwhile")
        }
        try other.writeInbound(ServerHandlerTests.framed([try Packet.query("a.blocked.test", id: 7)]))
        #expect(try ServerHandlerTests.readReplies(other).map(\.header.id) == [7], "another client does not wait for this one")
        #expect(turns.clientCount == 1, "a client that asked and was answered gives its turn back")

        // The first connection keeps the turn for `quantum` answers, then hands it on.
        var sent = 5
        while sent < TCPTurns.quantum {
            try pipelining[0].writeInbound(try Self.fullRead(sent))
            sent += 5
        }
        loop.run()
        #expect(try ServerHandlerTests.readReplies(pipelining[0]).count == sent - 5)
        #expect(try !Self.reading(pipelining[0]), "it waits behind the others now")
        #expect(try ServerHandlerTests.readReplies(pipelining[1]).count == 5, "the next connection's read is answered")
        #expect(try ServerHandlerTests.readReplies(pipelining[2]).isEmpty)

        // A connection that closes with the turn hands it on.
        try pipelining[1].close().wait()
        loop.run()
        #expect(try ServerHandlerTests.readReplies(pipelining[2]).count == 5)
        #expect(try Self.reading(pipelining[2]))
    }

    @Test func a_connection_that_filled_its_last_read_and_then_went_quiet_gives_the_turn_back() throws {
        let loop = EmbeddedEventLoop()
        let turns = TCPTurns(eventLoop: loop)
        let first = try Self.channel(from: "192.0.2.1", turns: turns, loop: loop)
        let second = try Self.channel(from: "192.0.2.1", turns: turns, loop: loop)
        defer { for channel in [first, second] { _ = try? channel.finish() } }
        try first.writeInbound(try Self.fullRead(0))
        try second.writeInbound(ServerHandlerTests.framed([try Packet.query("a.blocked.test", id: 9)]))
        #expect(try ServerHandlerTests.readReplies(second).isEmpty)
        loop.advanceTime(by: TCPTurns.quietAfter)
        #expect(try ServerHandlerTests.readReplies(second).map(\.header.id) == [9])
        #expect(turns.clientCount == 0, "answered, nothing holds the turn")
    }
}
