import DNSWire
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import Upstream

/// The pooled upstream sockets (SPEC §9): a bounded number of descriptors however many questions
/// are outstanding, ports that still change, and replies still matched per question.
@Suite struct UpstreamSocketPoolTests {
    /// Answers every A query with 198.51.100.9 and notes the source port it came from.
    final class RecordingUpstream: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>
        let ports = Mutex<Set<Int>>([])

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            ports.withLock { _ = $0.insert(envelope.remoteAddress.port ?? 0) }
            guard var message = try? DNSMessage(parsing: Array(envelope.data.readableBytesView)), let question = message.questions.first
            else { return }
            message.header.isResponse = true
            message.answers = [.a(question.name, ttl: 60, IPv4Address(198, 51, 100, 9))]
            guard let bytes = try? message.serialize() else { return }
            context.writeAndFlush(
                wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: ByteBuffer(bytes: bytes))), promise: nil)
        }
    }

    /// A recording upstream on a loopback port of `group`: its channel, its address, and what it saw.
    static func recordingUpstream(on group: any EventLoopGroup) async throws -> (channel: any Channel, address: SocketAddress, recorder: RecordingUpstream) {
        let recorder = RecordingUpstream()
        let channel = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(recorder) } }
            .bind(host: "127.0.0.1", port: 0).get()
        return (channel, try #require(channel.localAddress), recorder)
    }

    static func ask(_ pool: UpstreamSocketPool, _ name: String, id: UInt16, upstream: SocketAddress, loop: any EventLoop) async throws -> DNSMessage {
        let question = DNSQuestion(name: try DNSName(name), type: .a)
        let bytes = try DNSMessage(header: DNSHeader(id: id, recursionDesired: true), questions: [question]).serialize()
        return try await pool.exchange(
            bytes, matcher: ReplyMatcher(upstream: upstream, id: id, question: question), timeout: .seconds(2), unwantedThreshold: 10,
            counter: nil, on: loop)
    }

    @Test func two_hundred_questions_at_once_use_at_most_the_pool_and_all_get_their_own_answer() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (upstream, address, recorder) = try await Self.recordingUpstream(on: group)
        let pool = UpstreamSocketPool(socketsPerLoop: 4, questionsPerPort: 1000)
        let loop = group.next()
        let names = try await withThrowingTaskGroup(of: String.self) { tasks in
            for index in 0..<200 {
                tasks.addTask {
                    let reply = try await Self.ask(pool, "n\(index).test", id: UInt16(index), upstream: address, loop: loop)
                    return reply.questions.first?.name.description ?? "?"
                }
            }
            return try await tasks.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(names.count == 200)
        #expect(await pool.openSockets == 4)
        #expect((2...4).contains(recorder.ports.withLock { $0.count }), "\(recorder.ports.withLock { $0 })")
        try await upstream.close()
        try await group.shutdownGracefully()
    }

    @Test func a_port_that_has_sent_its_share_is_replaced_by_a_new_one() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (upstream, address, recorder) = try await Self.recordingUpstream(on: group)
        let pool = UpstreamSocketPool(socketsPerLoop: 1, questionsPerPort: 5)
        for index in 0..<30 {
            _ = try await Self.ask(pool, "r\(index).test", id: UInt16(index), upstream: address, loop: group.next())
        }
        // One socket at a time, a new random port after every 5 questions (the successor is bound
        // while the 6th goes from the old one).
        #expect(await pool.openSockets == 1)
        #expect(recorder.ports.withLock { $0.count } >= 4, "\(recorder.ports.withLock { $0 })")
        try await upstream.close()
        try await group.shutdownGracefully()
    }
}
