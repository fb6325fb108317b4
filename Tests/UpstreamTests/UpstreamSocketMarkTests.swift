import DNSWire
import NIOCore
import NIOPosix
import Testing
@testable import Upstream

/// The firewall's SO_MARK (SPEC §9b) on the pooled upstream sockets: the redirect of DNS lets only
/// marked sockets out, so every pooled socket must carry the mark exactly while the firewall is on,
/// the ones opened at start and the replacements of rotated ports (the open ones after a reload:
/// `ForwarderSocketMarkTests` in SinkholeTests, since the forwarder applies a reload).
/// Read back from the kernel (getsockopt); setting a mark needs CAP_NET_ADMIN, which the tests have
/// as root (CI runs as root).
@Suite struct UpstreamSocketMarkTests {
    @Test func sockets_opened_at_start_and_their_rotated_replacements_carry_the_mark() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (upstream, address, _) = try await UpstreamSocketPoolTests.recordingUpstream(on: group)
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
}
