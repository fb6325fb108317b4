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
    var descriptors: Int { total + administratorShare }
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

/// Hands the bind's outcome from the server's task to `bind()`, and holds accepting back until
/// `serve()` (connections queue in the listen backlog meanwhile, as with a plain bind).
final class StartSignal: Sendable {
    private struct State {
        var bound: Result<Void, any Error>?
        var listener: (any Channel)?
        var bindWaiters: [CheckedContinuation<Void, any Error>] = []
        var serving = false
        var serveWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// The listening channel, once bound.
    var listener: (any Channel)? { state.withLock { $0.listener } }

    /// Runs `server` in a task of its own and reports its bind (or its end) here. Detached, so
    /// Hummingbird's own graceful-shutdown handler is not armed by the helper's service group:
    /// shutdown cancels `serve(_:)` instead, and a second, graceful stop of the same server would
    /// only log "Already closed" and a CancellationError.
    func runDetached<Child: ServerChildChannel>(_ server: Server<Child>) -> Task<Void, any Error> {
        Task.detached { [self] in
            do {
                try await server.run()
                signal(.failure(CancellationError()))
            } catch {
                signal(.failure(error))
                throw error
            }
        }
    }

    /// Lets the server accept, and waits for `running` to end. Cancelling closes the listener
    /// first, so Hummingbird's accept loop ends as a closed socket rather than as an error, then
    /// cancels the connections (their request loops close their input).
    func serve(_ running: Task<Void, any Error>) async throws {
        serve()
        let listener = self.listener
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            if let listener {
                listener.close().whenComplete { _ in running.cancel() }
            } else {
                running.cancel()
            }
        }
    }

    func signal(_ outcome: Result<Void, any Error>, listener: (any Channel)? = nil) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard state.bound == nil else { return [] }
            state.bound = outcome
            state.listener = listener
            defer { state.bindWaiters = [] }
            return state.bindWaiters
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }

    func waitForBind() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if state.bound == nil { state.bindWaiters.append(continuation) }
                return state.bound
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    func serve() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.serving = true
            defer { state.serveWaiters = [] }
            return state.serveWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitForServe() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if !state.serving { state.serveWaiters.append(continuation) }
                return state.serving
            }
            if now { continuation.resume() }
        }
    }
}

extension Logger {
    /// This logger for Hummingbird's own lines, warnings and worse only: it says "listening" at
    /// info with the temporary socket path, and the helper says it once itself. A wrapping handler
    /// rather than a lower `logLevel`, because the helper's level is one for the whole process
    /// (`LiveLevelHandler`): setting it on a copy would silence every other line.
    func with(level: Logger.Level) -> Logger {
        let base = self
        return Logger(label: label) { _ in MinimumLevelHandler(base: base, minimum: level) }
    }
}

/// Passes on what is at `minimum` or worse and drops the rest.
struct MinimumLevelHandler: LogHandler {
    let base: Logger
    let minimum: Logger.Level
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { max(minimum, base.logLevel) }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= minimum else { return }
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        base.log(level: event.level, event.message, metadata: merged, source: event.source, file: event.file, function: event.function, line: event.line)
    }
}
