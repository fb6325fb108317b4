#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import Foundation
import Logging
import NIOCore
import Hummingbird
import HummingbirdCore
import NIOPosix
import ServiceKit
import ServiceLifecycle
import Sinkhole
import Synchronization

/// Limits and location of the control server.
public struct ControlServerConfiguration: Sendable {
    public var socket: ControlSocketFile
    /// Request bodies above this get 413; the API's bodies are a few hundred bytes.
    public var maxBodyBytes: Int
    /// Header sections above this get 400 (NIO's decoder limit).
    public var maxHeaderBytes: Int
    /// A connection that sends no whole request for this long, or takes none of its answer for
    /// this long, is closed (`IdleConnectionCloser`): the whole-request limit. The CLI sends its request as soon as it
    /// connects and reads the answer at once, so only an abandoned or hostile client ever waits
    /// this long.
    public var idleTimeout: TimeAmount
    /// Connections open at once, in total and per uid (SO_PEERCRED).
    public var limits: ControlConnectionLimits

    public init(
        socket: ControlSocketFile, maxBodyBytes: Int = 64 * 1024, maxHeaderBytes: Int = 16 * 1024, idleTimeout: TimeAmount = .seconds(5),
        limits: ControlConnectionLimits = ControlConnectionLimits()
    ) {
        self.socket = socket
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.idleTimeout = idleTimeout
        self.limits = limits
    }
}

/// How many control connections may be open (`helper.control_connections` and
/// `helper.control_connections_per_user`). Any member of group `scrolloff` may connect; without
/// these bounds one of them could hold thousands of idle connections and leave the helper without
/// file descriptors to forward queries with (SPEC §9). Per uid, so such a member cannot lock out
/// root's `scrolloff status`.
public struct ControlConnectionLimits: Sendable, Equatable {
    public var total: Int
    public var perUser: Int

    public init(total: Int = 64, perUser: Int = 8) {
        self.total = total
        self.perUser = perUser
    }

    /// Connections of root and the helper's own user, outside `total`, so that members of the
    /// group together cannot lock out the administrator.
    var administratorShare: Int { 2 * perUser }
    /// Descriptors these connections may hold at most.
    package var descriptors: Int { total + administratorShare }
}

/// The helper's control API: HTTP/1.1 + JSON on a Unix socket, so the CLI and
/// `curl --unix-socket` both work (SPEC §11, §13). Hummingbird serves it (its HTTP/1 channel and
/// request loop, its router); this adds what a control socket needs around it: the caller's
/// credentials per connection (SO_PEERCRED), the connection caps, the whole-request time limit,
/// the body limit, and the socket file's mode and owner. Run it as a `Service`; tests may
/// `bind()` and `serve()` it themselves.
public struct ControlServer: Service {
    public let configuration: ControlServerConfiguration
    let router: ControlRouter
    let logger: Logger
    let eventLoopGroup: any EventLoopGroup

    public init(
        configuration: ControlServerConfiguration, router: ControlRouter, logger: Logger,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
    }

    public func run() async throws { try await run(whenBound: {}) }

    /// Runs the server; `whenBound` is called once the socket file answers connections (the
    /// helper's readiness for systemd waits for it, `ReadinessGate`).
    public func run(whenBound: @Sendable () -> Void) async throws {
        let bound = try await bind()
        whenBound()
        // Shutdown cancels: the listener and every connection close at once. A request cut short
        // changes nothing half-way (list copies are replaced atomically), and the CLI must not
        // keep a stopping helper alive for the length of a download.
        do {
            try await cancelWhenGracefulShutdown {
                try await bound.serve()
            }
        } catch is CancellationError where Task.isShuttingDownGracefully {
            logger.info("control socket closed", metadata: ["control.socket": "\(configuration.socket.path)"])
        }
    }

    /// Binds the socket and puts it in place; connections queue until `serve()` runs.
    public func bind() async throws -> BoundControlServer {
        let socketFile = configuration.socket
        if socketFile.path.utf8.count > 107 { throw ControlSocketError.pathTooLong(path: socketFile.path) }
        try socketFile.prepare()
        let temporary = socketFile.temporaryPath()
        let channel = ControlChannel(
            configuration: configuration, responder: ControlResponder(
                routes: router.responder(), maxBodyBytes: configuration.maxBodyBytes, logger: logger),
            limitLog: ThrottledLog(logger: logger), logger: logger)
        let limitLog = channel.limitLog
        let gate = AcceptGate(cap: configuration.limits.descriptors)
        let started = StartSignal()
        let server = Server(
            childChannelSetup: channel,
            configuration: ServerConfiguration(address: .unixDomainSocket(path: temporary), backlog: 64),
            onServerRunning: { listener in
                // Out of descriptors: said once a minute; NIO's AcceptBackoffHandler, after it,
                // waits a second before accepting again.
                // Bound: the socket goes into place at once (a CLI started with the helper should
                // find it as early as before), the logger follows on the listener's loop.
                started.signal(.success(()), listener: listener)
                let name = "control \(socketFile.path)"
                try? await listener.eventLoop.submit {
                    try listener.pipeline.syncOperations.addHandler(AcceptFailureLogger(log: limitLog, listener: name), position: .first)
                    try listener.pipeline.syncOperations.addHandler(gate.handler(), position: .first)
                }.get()
                await started.waitForServe()
            },
            eventLoopGroup: eventLoopGroup, logger: logger.with(level: .warning))
        let running = started.runDetached(server)
        do {
            try await started.waitForBind()
        } catch {
            unlink(temporary)
            throw error
        }
        let inode: ino_t
        do {
            inode = try socketFile.install(boundAt: temporary)
        } catch {
            unlink(temporary)
            started.serve()
            try? await server.shutdownGracefully()
            _ = try? await running.value
            throw error
        }
        logger.info("control socket listening", metadata: ["control.socket": "\(socketFile.path)"])
        return BoundControlServer(server: server, running: running, started: started, socketFile: socketFile, inode: inode)
    }
}

/// A listening control server.
public struct BoundControlServer: Sendable {
    let server: Server<ControlChannel>
    let running: Task<Void, any Error>
    let started: StartSignal
    let socketFile: ControlSocketFile
    let inode: ino_t

    public var socketPath: String { socketFile.path }

    /// Accepts connections until `close()` or the task is cancelled, then removes the socket file
    /// (only if it is still ours). Cancelling closes every connection at once: the listener first,
    /// so Hummingbird's accept loop ends as a closed socket rather than as an error, then the
    /// connections (their request loops are cancelled and close their input).
    public func serve() async throws {
        defer { socketFile.remove(inode: inode) }
        try await started.serve(running)
    }

    /// Stops accepting; `serve()` returns once open connections end (idle ones are closed).
    public func close() async {
        started.serve()
        try? await server.shutdownGracefully()
    }
}
