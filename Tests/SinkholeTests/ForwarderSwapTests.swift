import DNSWire
import Logging
import NIOCore
import NIOPosix
import Testing
@testable import Sinkhole

/// A configuration reload replaces the forwarder's upstream set while questions are in flight.
@Suite struct ForwarderSwapTests {
    /// Answers every A query with `address`, after `delay`.
    final class SlowUpstream: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>
        let address: IPv4Address
        let delay: TimeAmount

        init(address: IPv4Address, delay: TimeAmount) {
            self.address = address
            self.delay = delay
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            guard var message = try? DNSMessage(parsing: Array(envelope.data.readableBytesView)),
                  let question = message.questions.first
            else { return }
            message.header.isResponse = true
            message.answers = [.a(question.name, ttl: 60, address)]
            guard let bytes = try? message.serialize() else { return }
            let reply = AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: ByteBuffer(bytes: bytes))
            let channel = context.channel
            context.eventLoop.scheduleTask(in: delay) { channel.writeAndFlush(reply, promise: nil) }
        }
    }

    static func upstream(_ group: any EventLoopGroup, answering address: IPv4Address, after delay: TimeAmount) async throws -> any Channel {
        try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SlowUpstream(address: address, delay: delay))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    static func question(_ name: String) throws -> OutgoingQuestion {
        OutgoingQuestion(name: try DNSName(name).wireBytes, type: .a, class: .in, dnssecOK: false, checkingDisabled: false)
    }

    static func address(_ answer: CachedAnswer) throws -> [DNSRData] {
        try DNSMessage(parsing: answer.wire).answers.map(\.rdata)
    }

    @Test func a_question_in_flight_finishes_on_its_upstream_and_the_next_one_uses_the_new_set() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let old = try await Self.upstream(group, answering: IPv4Address(198, 51, 100, 1), after: .milliseconds(400))
        let new = try await Self.upstream(group, answering: IPv4Address(198, 51, 100, 2), after: .zero)
        let forwarder = Forwarder(
            configuration: ForwarderConfiguration(upstreams: [try #require(old.localAddress)]), logger: Logger(label: "test"))

        let inFlight: EventLoopFuture<CachedAnswer> = forwarder.resolve(try Self.question("slow.test"), on: group.next())
        try await Task.sleep(for: .milliseconds(50))
        forwarder.replace(with: ForwarderConfiguration(
            upstreams: [try #require(new.localAddress)], perUpstreamTimeout: .seconds(1), overallTimeout: .seconds(2)))
        #expect(forwarder.configuration.perUpstreamTimeout == .seconds(1))

        let next: EventLoopFuture<CachedAnswer> = forwarder.resolve(try Self.question("fast.test"), on: group.next())
        let after = try await next.get()
        #expect(try Self.address(after) == [.a(IPv4Address(198, 51, 100, 2))], "a new question asks the new upstream")
        let finished = try await inFlight.get()
        #expect(finished.rcode == .noError, "the question in flight was not dropped")
        #expect(try Self.address(finished) == [.a(IPv4Address(198, 51, 100, 1))], "it finished on the upstream it started with")

        try await old.close()
        try await new.close()
        try await group.shutdownGracefully()
    }
}
