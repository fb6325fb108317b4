import DNSFraming
import DNSWire
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing
@testable import Sinkhole

/// Slow TCP readers (the boundaries review): one connection cannot hold its event loop, and connections are
/// admitted on the listener's thread, never waiting for a busy event loop.
@Suite struct TCPAdmissionTests {
    /// Counts the flushes that reach the socket.
    final class FlushCounter: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = NIOAny
        var flushes = 0
        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    @Test func answers_that_come_in_together_are_flushed_once_not_once_each() throws {
        let upstream = TCPLimitTests.HeldAnswers()
        let channel = EmbeddedChannel()
        let counter = FlushCounter()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(
            TCPQueryHandler(chain: ResolverChain(links: [QueryGateLink(), upstream]), limits: TCPLimits(), counter: ConnectionCounter(limit: 10)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4000)).wait()
        try channel.writeInbound(try TCPLimitTests.queries(50))
        #expect(upstream.count == 50)
        let before = counter.flushes
        // One upstream answer completes every query joined to its question at once.
        upstream.answer(50)
        channel.embeddedEventLoop.run()
        #expect(Set(try ServerHandlerTests.readReplies(channel).map(\.header.id)) == Set((0..<50).map(UInt16.init)))
        #expect(counter.flushes - before == 1, "\(counter.flushes - before) flushes for 50 replies: a writev each")
    }

    @Test func a_refused_connection_is_closed_without_being_set_up_and_an_admitted_one_brings_its_slot() throws {
        let registry = TCPConnectionRegistry(limit: 10, perKeyLimit: 1)
        let admission = TCPAdmission(registry: registry, limitLog: nil)
        let loop = EmbeddedEventLoop()
        let first = EmbeddedChannel(loop: loop)
        try first.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: 4000)).wait()
        let second = EmbeddedChannel(loop: loop)
        try second.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: 4001)).wait()
        #expect(admission.admit(first))
        #expect(!admission.admit(second), "one connection per client address here")
        loop.run()
        #expect(!second.isActive)
        #expect(admission.take(for: second) == nil)
        // The first one's handler takes the slot it was admitted with and does not count it twice.
        let slot = try #require(admission.take(for: first))
        #expect(admission.take(for: first) == nil)
        try first.pipeline.syncOperations.addHandler(
            TCPQueryHandler(chain: try ServerHandlerTests.chain(), limits: TCPLimits(), counter: registry, slot: slot))
        first.pipeline.fireChannelActive()
        #expect(first.isActive)
        #expect(registry.current == 1)
        _ = try first.close().wait()
        #expect(registry.current == 0)
        #expect(admission.waitingForSetUp == 0)
    }

    /// A real listener whose only event loop is busy for 3 s: connections are admitted, refused
    /// and counted meanwhile, on the listener's thread. Before, each waited for the busy loop.
    @Test func connections_are_admitted_on_the_listening_thread_while_their_event_loop_is_busy() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let addresses = Bound()
        let server = DNSServer(
            configuration: DNSServerConfiguration(
                listen: [HostPort(host: "127.0.0.1", port: 0)], tcp: TCPLimits(maximumConnections: 4, maximumConnectionsPerClient: 3)),
            chain: try ServerHandlerTests.chain(), group: group, logger: Logger(label: "tcp-admission-test"),
            ready: { bound in addresses.withLock { $0 = bound } })
        let serving = Task { try await server.run() }
        var failure: (any Error)?
        do {
            try await Self.connectWhileBusy(server, group: group, addresses: addresses)
        } catch {
            failure = error
        }
        serving.cancel()
        _ = await serving.result
        try? await group.shutdownGracefully()
        if let failure { throw failure }
    }

    private static func connectWhileBusy(_ server: DNSServer, group: MultiThreadedEventLoopGroup, addresses: Bound) async throws {
        // Generous: in `make test` a thousand tests start at once on Swift's shared pool (one thread
        // per core), and the server's task binds only when it gets a turn, which took over a minute
        // there. Nothing is timed until it has bound; what is timed below runs on threads of its own.
        let deadline = Date().addingTimeInterval(300)
        while addresses.withLock({ $0.isEmpty }), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let port = try #require(addresses.withLock { $0.first?.port })
        // The loop the connections are given to answers nothing for 3 s.
        let busyUntil = Date().addingTimeInterval(3)
        group.next().execute { Thread.sleep(until: busyUntil) }
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        for source in ["127.0.0.21", "127.0.0.21", "127.0.0.21", "127.0.0.21", "127.0.0.22"] {
            sockets.append(try Self.connect(from: source, to: port))
        }
        // Four admitted (three of .21, its share, and .22); the fourth of .21 refused.
        let admittedBy = Date().addingTimeInterval(1.5)
        // Polled on this thread (`usleep`), not by `Task.sleep`: a sleeping task wakes only when a pool
        // thread is free, which under a full test run can be after the busy loop is free again.
        while server.counter.current < 4, Date() < admittedBy { usleep(20_000) }
        #expect(server.counter.current == 4, "admitted while the loop was busy: \(server.counter.current)")
        #expect(Date() < busyUntil, "the loop was busy throughout")
        #expect(server.counter.current(for: ClientAddress(try SocketAddress(ipAddress: "127.0.0.21", port: 0))) == 3)
    }

    /// The addresses the server bound, as it announces them once ready.
    final class Bound: Sendable {
        let value = Mutex<[HostPort]>([])
        func withLock<T>(_ body: (inout [HostPort]) -> T) -> T { value.withLock { body(&$0) } }
    }

    static func connect(from source: String, to port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }
}
