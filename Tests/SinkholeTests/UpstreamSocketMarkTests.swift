import DNSWire
import Logging
import NIOCore
import NIOPosix
import Testing
@testable import Sinkhole

/// The firewall's SO_MARK (SPEC §9b) on the pooled upstream sockets: the redirect of DNS lets only
/// marked sockets out, so every pooled socket must carry the mark exactly while the firewall is on,
/// the ones opened at start, the replacements of rotated ports, and the open ones after a reload.
/// Read back from the kernel (getsockopt); setting a mark needs CAP_NET_ADMIN, which the tests have
/// as root (CI runs as root).
@Suite struct UpstreamSocketMarkTests {
    static func upstream(on group: any EventLoopGroup) async throws -> (any Channel, SocketAddress) {
        let recorder = UpstreamSocketPoolTests.RecordingUpstream()
        let channel = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(recorder) } }
            .bind(host: "127.0.0.1", port: 0).get()
        return (channel, try #require(channel.localAddress))
    }

    @Test func sockets_opened_at_start_and_their_rotated_replacements_carry_the_mark() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (upstream, address) = try await Self.upstream(on: group)
        let pool = UpstreamSocketPool(socketsPerLoop: 2, questionsPerPort: 3, mark: 0x5C0F)
        let loop = group.next()
        await pool.open(on: loop, inet6: false)
        #expect(try await pool.openMarks == [0x5C0F, 0x5C0F])
        for index in 0..<20 {
            _ = try await UpstreamSocketPoolTests.ask(pool, "m\(index).test", id: UInt16(index), upstream: address, loop: loop)
        }
        #expect(try await pool.openMarks == [0x5C0F, 0x5C0F])
        try await upstream.close()
        try await group.shutdownGracefully()
    }

    @Test func a_reload_marks_and_unmarks_the_open_sockets_in_place_and_questions_still_go_out() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (upstream, address) = try await Self.upstream(on: group)
        let forwarder = Forwarder(configuration: ForwarderConfiguration(upstreams: [address]), logger: Logger(label: "test"))
        await forwarder.openSockets(on: group)
        let opened = await forwarder.sockets.openSockets
        #expect(opened == forwarder.sockets.socketsPerLoop)
        #expect(try await forwarder.sockets.openMarks == Array(repeating: 0, count: opened))

        forwarder.replace(with: ForwarderConfiguration(upstreams: [address], socketMark: 0x1234))
        #expect(try await forwarder.sockets.openMarks == Array(repeating: 0x1234, count: opened))
        _ = try await UpstreamSocketPoolTests.ask(forwarder.sockets, "on.test", id: 1, upstream: address, loop: group.next())

        forwarder.replace(with: ForwarderConfiguration(upstreams: [address], socketMark: nil))
        #expect(try await forwarder.sockets.openMarks == Array(repeating: 0, count: opened))
        let reply = try await UpstreamSocketPoolTests.ask(forwarder.sockets, "off.test", id: 2, upstream: address, loop: group.next())
        #expect(reply.answers.count == 1)
        try await upstream.close()
        try await group.shutdownGracefully()
    }
}
