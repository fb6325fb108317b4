import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Sinkhole

/// Binding the metrics address failed at start-up; the message says what to change.
public struct MetricsListenError: Error, Sendable, CustomStringConvertible {
    public var address: HostPort
    public var reason: String
    public var description: String {
        "cannot serve metrics on \(address): \(reason). Choose another address with --metrics ADDR:PORT "
            + "(or [metrics] listen in the configuration file), or leave it out to turn metrics off."
    }
}

/// The optional Prometheus endpoint: `GET /metrics` over HTTP/1.1 on a TCP address, off unless
/// `HelperConfiguration.metricsListen` is set. Every other path is 404, every other method 405.
///
/// It binds TCP only, and answers one request per connection (`Connection: close`): a scrape every
/// few seconds does not need keep-alive, and the server then holds no idle connections.
///
/// Its connections are bounded like the control socket's (issue 11): at most `connectionLimit` in
/// total and `connectionsPerClient` per client address (a newcomer evicts the longest-idle
/// connection of the address holding the most, as DNS over TCP does), and each is closed
/// `connectionDeadline` after it was accepted, answered or not. Unbounded, a flood of idle
/// connections took every descriptor of the helper and scrapes and DNS over TCP failed with it.
public final class MetricsServer: Service {
    public static let connectionLimit = 32
    public static let connectionsPerClient = 4
    /// A scrape takes milliseconds; bytes dribbled in slowly do not extend it.
    public static let connectionDeadline = TimeAmount.seconds(5)

    public let listen: HostPort
    let sources: MetricsSources
    let exposition: MetricsExposition
    let group: any EventLoopGroup
    let logger: Logger
    /// Called with the bound address (`listening metrics 127.0.0.1:9153`) before serving.
    let announce: @Sendable (String) -> Void
    /// Called once the listener is bound (the helper's readiness for systemd waits for it).
    let whenBound: @Sendable () -> Void

    public init(
        listen: HostPort, sources: MetricsSources, exposition: MetricsExposition, group: any EventLoopGroup, logger: Logger,
        announce: @escaping @Sendable (String) -> Void = { _ in }, whenBound: @escaping @Sendable () -> Void = {}
    ) {
        self.whenBound = whenBound
        self.listen = listen
        self.sources = sources
        self.exposition = exposition
        self.group = group
        self.logger = logger
        self.announce = announce
    }

    public func run() async throws {
        let channel = try await bind()
        let shown = HostPort(host: listen.host, port: channel.localAddress?.port ?? listen.port)
        announce("listening metrics \(shown)")
        logger.info("metrics listening", metadata: ["metrics.address": "\(shown)"])
        whenBound()
        try? await gracefulShutdown()
        try? await channel.close()
    }

    private func bind() async throws(MetricsListenError) -> any Channel {
        let sources = sources
        let exposition = exposition
        let registry = TCPConnectionRegistry(limit: Self.connectionLimit, perKeyLimit: Self.connectionsPerClient)
        let limitLog = ThrottledLog(logger: logger)
        let listen = listen
        do {
            return try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .serverChannelInitializer { channel in
                    // Out of descriptors: said once a minute; NIO's AcceptBackoffHandler, which this
                    // bootstrap adds after it, waits a second before accepting again.
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(AcceptFailureLogger(log: limitLog, listener: "metrics \(listen)"))
                    }
                }
                .childChannelInitializer { channel in
                    let client = ClientAddress(channel.remoteAddress)
                    switch registry.admit(client, now: NIODeadline.now().uptimeNanoseconds, close: { channel.close(promise: nil) }) {
                    case .refused:
                        limitLog.warning(
                            "metrics-total", "refusing metrics connections: \(Self.connectionLimit) are open, at most \(Self.connectionsPerClient) per client address",
                            metadata: ["client.ip": "\(channel.remoteAddress?.ipAddress ?? "?")"])
                        return channel.close()
                    case .admitted(let entry, _):
                        channel.closeFuture.whenComplete { _ in registry.release(entry) }
                    }
                    let deadline = channel.eventLoop.scheduleTask(in: Self.connectionDeadline) { channel.close(promise: nil) }
                    channel.closeFuture.whenComplete { _ in deadline.cancel() }
                    return channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMapThrowing {
                        try channel.pipeline.syncOperations.addHandler(
                            MetricsHTTPHandler(sources: sources, exposition: exposition))
                    }
                }
                .bind(host: listen.host, port: listen.port)
                .get()
        } catch {
            throw MetricsListenError(address: listen, reason: "\(error)")
        }
    }
}

/// Answers one request: the exposition for `GET /metrics`, a short plain-text error otherwise.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let sources: MetricsSources
    let exposition: MetricsExposition
    private var request: HTTPRequestHead?

    init(sources: MetricsSources, exposition: MetricsExposition) {
        self.sources = sources
        self.exposition = exposition
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            .first.map(String.init) ?? head.uri
        guard path == "/metrics" else {
            send(.notFound, body: Array("Not found. The metrics are at /metrics.\n".utf8), context: context)
            return
        }
        guard head.method == .GET else {
            send(
                .methodNotAllowed, body: Array("Only GET is served at /metrics.\n".utf8), extra: [("Allow", "GET")],
                context: context)
            return
        }
        // The reading awaits the lists' actor; the reply is written back on this channel's loop.
        let sources = sources
        let exposition = exposition
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.makeFutureWithTask {
            exposition.render(await sources.read())
        }.whenSuccess { body in
            let (handler, context) = loopBound.value
            handler.send(.ok, body: body, contentType: MetricsExposition.contentType, context: context)
        }
    }

    private func send(
        _ status: HTTPResponseStatus, body: [UInt8], contentType: String = "text/plain; charset=utf-8",
        extra: [(String, String)] = [], context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", "\(body.count)"), ("Connection", "close")])
        headers.add(contentsOf: extra)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
