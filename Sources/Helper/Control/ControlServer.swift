#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Sinkhole

/// Limits and location of the control server.
public struct ControlServerConfiguration: Sendable {
    public var socket: ControlSocketFile
    /// Request bodies above this get 413; the API's bodies are a few hundred bytes.
    public var maxBodyBytes: Int
    /// Header sections above this get 400 (NIO's decoder limit).
    public var maxHeaderBytes: Int
    /// A connection that sends no whole request for this long, or takes none of its answer for
    /// this long, is closed (`IdleConnectionCloser`). The CLI sends its request as soon as it
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
/// file descriptors to forward queries with (issue 11). Per uid, so such a member cannot lock out
/// root's `scrolloff status`.
public struct ControlConnectionLimits: Sendable, Equatable {
    public var total: Int
    public var perUser: Int

    public init(total: Int = 64, perUser: Int = 8) {
        self.total = total
        self.perUser = perUser
    }
}

/// The helper's control API: HTTP/1.1 + JSON on a Unix socket, so the CLI and
/// `curl --unix-socket` both work (SPEC §11, §13). Run it as a `Service`; tests may `bind()`
/// and `serve()` it themselves.
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
        let maxHeaderBytes = configuration.maxHeaderBytes
        let idleTimeout = configuration.idleTimeout
        let slots = ConnectionSlots<UInt32>(limit: configuration.limits.total, perKeyLimit: configuration.limits.perUser)
        // Root and the helper's own user have slots of their own, outside the total: members of
        // the group could otherwise fill it together (eight at their share fill the default 64)
        // and lock the administrator's CLI out of the helper it must repair.
        let administrator = geteuid()
        let administratorSlots = ConnectionSlots<UInt32>(limit: 2 * configuration.limits.perUser, perKeyLimit: configuration.limits.perUser)
        let limitLog = ThrottledLog(logger: logger)
        let socketPath = socketFile.path
        let listener = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelInitializer { channel in
                // Out of descriptors: said once a minute; NIO's AcceptBackoffHandler, which this
                // bootstrap adds after it, waits a second before accepting again.
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptFailureLogger(log: limitLog, listener: "control \(socketPath)"))
                }
            }
            .bind(unixDomainSocketPath: temporary, cleanupExistingSocketFile: true) { channel in
                PeerCredentials.read(from: channel).flatMapThrowing { caller -> ControlAdmission in
                    let callerSlots = caller.uid == 0 || caller.uid == administrator ? administratorSlots : slots
                    if let refusal = callerSlots.acquire(caller.uid) {
                        let (key, message): (String, Logger.Message) = switch refusal {
                        case .total(let limit):
                            ("control-total", "refusing control connections: all \(limit) are open (helper.control_connections)")
                        case .perKey(let limit):
                            ("control-user-\(caller.uid)",
                             "refusing control connections of uid \(caller.uid): it holds \(limit) already (helper.control_connections_per_user)")
                        }
                        limitLog.warning(key, message, metadata: ["client.uid": "\(caller.uid)", "client.pid": "\(caller.pid)"])
                        channel.close(promise: nil)
                        return .refused
                    }
                    channel.closeFuture.whenComplete { _ in callerSlots.release(caller.uid) }
                    var limits = NIOHTTPDecoderLimitConfiguration()
                    limits.maxHeaderListSize = maxHeaderBytes
                    limits.maxHeaderFieldSize = maxHeaderBytes
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline(
                        withPipeliningAssistance: false, withErrorHandling: false,
                        withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits
                    )
                    try sync.addHandler(ControlProtocolErrorHandler())
                    try sync.addHandler(IdleConnectionCloser(timeout: idleTimeout))
                    let wrapped = try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                    return .accepted(ControlConnection(caller: caller, channel: wrapped))
                }
            }
        let inode: ino_t
        do {
            inode = try socketFile.install(boundAt: temporary)
        } catch {
            unlink(temporary)
            try? await listener.channel.close()
            throw error
        }
        logger.info("control socket listening", metadata: ["control.socket": "\(socketFile.path)"])
        return BoundControlServer(
            listener: listener, socketFile: socketFile, inode: inode,
            handler: ConnectionHandler(router: router, maxBodyBytes: configuration.maxBodyBytes, logger: logger)
        )
    }
}

/// A connection let in, or one refused (already closed) for being over a limit.
enum ControlAdmission: Sendable {
    case accepted(ControlConnection)
    case refused
}

struct ControlConnection: Sendable {
    var caller: CallerIdentity
    var channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
}

/// A listening control server.
public struct BoundControlServer: Sendable {
    let listener: NIOAsyncChannel<ControlAdmission, Never>
    let socketFile: ControlSocketFile
    let inode: ino_t
    let handler: ConnectionHandler

    public var socketPath: String { socketFile.path }

    /// Accepts connections until the listener closes or the task is cancelled, then removes the
    /// socket file (only if it is still ours).
    public func serve() async throws {
        defer { socketFile.remove(inode: inode) }
        try await withThrowingDiscardingTaskGroup { group in
            try await listener.executeThenClose { connections in
                for try await admission in connections {
                    guard case .accepted(let connection) = admission else { continue }
                    group.addTask { await handler.handle(connection) }
                }
            }
        }
    }

    /// Stops accepting; `serve()` returns once open connections end.
    public func close() async {
        try? await listener.channel.close()
    }
}
