#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import Sinkhole
import Testing

/// The accept gate (SPEC §9): a listener stops accepting once its connections hold the cap plus
/// the slack, so a flood cannot take descriptors faster than the connections' own rules refuse
/// them, and it accepts again as soon as connections close.
@Suite struct AcceptGateTests {
    static func connect(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return fd
    }

    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(20)) }
        return condition()
    }

    @Test func a_flood_past_the_cap_waits_in_the_backlog_and_is_accepted_as_connections_close() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let gate = AcceptGate(cap: 2)
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 128)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(gate.handler()) }
            }
            // No handler: a connection stays open until its client closes it.
            .childChannelInitializer { $0.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        let clients = (0..<60).map { _ in Self.connect(port) }
        // The kernel completed all 60 handshakes (backlog); the listener took the gate's limit,
        // plus at most one read's worth (NIO accepts up to four per read) before it saw the count.
        #expect(try await Self.eventually { gate.open >= gate.limit })
        try await Task.sleep(for: .milliseconds(300))
        #expect(gate.open <= gate.limit + 4, "\(gate.open) accepted with a limit of \(gate.limit)")
        // Clients leaving make room: the listener accepts the last ten, which waited in the backlog.
        for fd in clients.prefix(50) { close(fd) }
        #expect(try await Self.eventually { gate.open == 10 }, "\(gate.open) open after 50 of 60 left")
        for fd in clients.dropFirst(50) { close(fd) }
        #expect(try await Self.eventually { gate.open == 0 })
        try await server.close()
        try await group.shutdownGracefully()
    }
}
