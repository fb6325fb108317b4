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

/// Limits and location of the control server.
public struct ControlServerConfiguration: Sendable {
    public var socket: ControlSocketFile
    /// Request bodies above this get 413; the API's bodies are a few hundred bytes.
    public var maxBodyBytes: Int
    /// Header sections above this get 400 (NIO's decoder limit).
    public var maxHeaderBytes: Int
    /// A connection idle between requests for this long is closed.
    public var idleTimeout: TimeAmount

    public init(socket: ControlSocketFile, maxBodyBytes: Int = 64 * 1024, maxHeaderBytes: Int = 16 * 1024, idleTimeout: TimeAmount = .seconds(30)) {
        self.socket = socket
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.idleTimeout = idleTimeout
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
        let listener = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 64)
            .bind(unixDomainSocketPath: temporary, cleanupExistingSocketFile: true) { channel in
                PeerCredentials.read(from: channel).flatMapThrowing { caller in
                    var limits = NIOHTTPDecoderLimitConfiguration()
                    limits.maxHeaderListSize = maxHeaderBytes
                    limits.maxHeaderFieldSize = maxHeaderBytes
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    try sync.configureHTTPServerPipeline(
                        withPipeliningAssistance: false, withErrorHandling: false,
                        withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits
                    )
                    try sync.addHandler(ControlProtocolErrorHandler())
                    try sync.addHandler(IdleConnectionCloser())
                    let wrapped = try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                    return ControlConnection(caller: caller, channel: wrapped)
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

struct ControlConnection: Sendable {
    var caller: CallerIdentity
    var channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
}

/// A listening control server.
public struct BoundControlServer: Sendable {
    let listener: NIOAsyncChannel<ControlConnection, Never>
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
                for try await connection in connections {
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
