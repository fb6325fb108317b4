import DNSWire
import Logging
import NIOCore
import NIOPosix
import Testing
@testable import Sinkhole
@testable import Upstream

/// The firewall's SO_MARK (SPEC §9b) after a reload: the forwarder re-marks its open pooled sockets
/// in place (the marks of sockets opened at start and of rotated ports: `UpstreamSocketMarkTests`
/// in UpstreamTests). Read back from the kernel (getsockopt); setting a mark needs CAP_NET_ADMIN,
/// which the tests have as root (CI runs as root).
@Suite struct ForwarderSocketMarkTests {
    /// One A question straight through the forwarder's pool, the way `Forwarder` sends over UDP.
    static func ask(_ pool: UpstreamSocketPool, _ name: String, id: UInt16, upstream: SocketAddress, loop: any EventLoop) async throws -> DNSMessage {
        let question = DNSQuestion(name: try DNSName(name), type: .a)
        let bytes = try DNSMessage(header: DNSHeader(id: id, recursionDesired: true), questions: [question]).serialize()
        return try await pool.exchange(
            bytes, matcher: ReplyMatcher(upstream: upstream, id: id, question: question), timeout: .seconds(2), unwantedThreshold: 10,
            counter: nil, on: loop)
    }

    @Test func a_reload_marks_and_unmarks_the_open_sockets_in_place_and_questions_still_go_out() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstream = try await ForwarderSwapTests.upstream(group, answering: IPv4Address(198, 51, 100, 9), after: .zero)
        let address = try #require(upstream.localAddress)
        let forwarder = Forwarder(configuration: ForwarderConfiguration(upstreams: [address]), logger: Logger(label: "test"))
        await forwarder.openSockets(on: group)
        let opened = await forwarder.sockets.openSockets
        #expect(opened == forwarder.sockets.socketsPerLoop)
        #expect(try await forwarder.sockets.openMarks == Array(repeating: 0, count: opened))

        forwarder.replace(with: ForwarderConfiguration(upstreams: [address], socketMark: 0x1234))
        #expect(try await forwarder.sockets.openMarks == Array(repeating: 0x1234, count: opened))
        _ = try await Self.ask(forwarder.sockets, "on.test", id: 1, upstream: address, loop: group.next())

        forwarder.replace(with: ForwarderConfiguration(upstreams: [address], socketMark: nil))
        #expect(try await forwarder.sockets.openMarks == Array(repeating: 0, count: opened))
        let reply = try await Self.ask(forwarder.sockets, "off.test", id: 2, upstream: address, loop: group.next())
        #expect(reply.answers.count == 1)
        try await upstream.close()
        try await group.shutdownGracefully()
    }
}
