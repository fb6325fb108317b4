import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import ServiceLifecycle
import Sinkhole

/// A Hummingbird HTTP/1.1 server on a TCP address, bound and stopped the way the helper needs:
/// the household page and the metrics endpoint both run on it (one HTTP stack, SPEC §9a).
///
/// Why not `Application.run()`: it runs its own service group and arms Hummingbird's graceful
/// handler, so the helper's stop shut the server down twice and logged "Already closed" (or a
/// CancellationError of its date cache) as errors. Here, as for the control socket
/// (`ControlServer`), the server runs detached from the helper's group and a stop cancels it:
/// the listener closes first, so the accept loop ends as a closed socket rather than as an
/// error, then the connections (their request loops are cancelled and close their input).
package struct TCPHTTPListener<ChildChannel: ServerChildChannel>: Sendable {
    let server: Server<ChildChannel>
    let running: Task<Void, any Error>
    let started: StartSignal
    /// The port bound (the one asked for, or the kernel's choice for 0).
    package let port: Int

    /// Binds `host:port`; throws what the bind threw (an `IOError` with `EADDRINUSE` for a port in
    /// use). Connections queue in the backlog until `serve()`.
    /// `name` is the listener in the line said (once a minute) when accepting fails for want of
    /// file descriptors; NIO's AcceptBackoffHandler, after that logger, waits a second before
    /// accepting again.
    package static func bind(
        host: String, port: Int, name: String, child: ChildChannel, cap: Int, group: any EventLoopGroup, logger: Logger
    ) async throws -> Self {
        let gate = AcceptGate(cap: cap)
        let started = StartSignal()
        let limitLog = ThrottledLog(logger: logger)
        let server = Server(
            childChannelSetup: child,
            configuration: ServerConfiguration(address: .hostname(host, port: port), backlog: 256),
            onServerRunning: { listener in
                try? await listener.eventLoop.submit {
                    try listener.pipeline.syncOperations.addHandler(AcceptFailureLogger(log: limitLog, listener: name), position: .first)
                    try listener.pipeline.syncOperations.addHandler(gate.handler(), position: .first)
                }.get()
                started.signal(.success(()), listener: listener)
                await started.waitForServe()
            },
            // Hummingbird says "Server started and listening" at info; the helper says it itself.
            eventLoopGroup: group, logger: logger.with(level: .warning))
        let running = started.runDetached(server)
        try await started.waitForBind()
        return TCPHTTPListener(server: server, running: running, started: started, port: started.listener?.localAddress?.port ?? port)
    }

    /// Accepts connections until the task is cancelled; then closes the listener and every
    /// connection and returns.
    func serve() async throws {
        try await started.serve(running)
    }

    /// Serves until the helper's graceful shutdown, then stops at once and quietly: a stop is not
    /// a failure, and a scrape or a page load cut short changes nothing.
    package func serveUntilShutdown() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await serve() }
        } catch is CancellationError where Task.isShuttingDownGracefully || Task.isCancelled {
        }
    }
}

/// Closes the connection once a response has gone out, for servers that answer one request per
/// connection (`Connection: close`, RFC 9112 §9.6: the server closes after that response). It sits
/// after Hummingbird's HTTP/1 codec, so it sees the response's parts.
package final class CloseAfterResponse: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    package init() {}

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(data).whenComplete { result in
            promise?.completeWith(result)
            loopBound.value.close(promise: nil)
        }
    }
}

/// A connection a TCP listener let in (its HTTP/1 channel), or one it closed at once for being over
/// a bound: the household page's and the metrics endpoint's child channels answer with this.
package enum HTTPAdmission: ServerChildChannelValue {
    case accepted(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    case refused(any Channel)

    package var channel: any Channel {
        switch self {
        case .accepted(let wrapped): wrapped.channel
        case .refused(let channel): channel
        }
    }
}
