import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// Who a DNS-over-TCP connection is counted under (SPEC §9.6): an IPv4 address, or an IPv6 /64.
@Suite struct TCPSlowReaderBoundsTests {
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
