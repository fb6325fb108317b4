import Logging
import NIOCore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOHTTPTypes
import NIOPosix
import ServiceKit
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
/// Hummingbird serves it, on the same `TCPHTTPListener` as the household page.
///
/// It binds TCP only, and answers one request per connection (`Connection: close`): a scrape every
/// few seconds does not need keep-alive, and the server then holds no idle connections.
///
/// Its connections are bounded like the control socket's (SPEC §9): at most `connectionLimit` in
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
        let listener: TCPHTTPListener<MetricsChannel>
        do {
            listener = try await TCPHTTPListener.bind(
                host: listen.host, port: listen.port, name: "metrics \(listen)", child: MetricsChannel(sources: sources, exposition: exposition, logger: logger),
                cap: MetricsServer.connectionLimit, group: group, logger: logger)
        } catch {
            throw MetricsListenError(address: listen, reason: "\(error)")
        }
        let shown = HostPort(host: listen.host, port: listener.port)
        announce("listening metrics \(shown)")
        logger.info("metrics listening", metadata: ["metrics.address": "\(shown)"])
        whenBound()
        try await listener.serveUntilShutdown()
    }
}

/// Each metrics connection: admitted by the `TCPConnectionRegistry` (a newcomer may evict the
/// longest-idle connection of the address holding the most), closed at its deadline whatever it
/// did, then Hummingbird's HTTP/1 pipeline answering one request and closing (`CloseAfterResponse`).
struct MetricsChannel: ServerChildChannel {
    typealias Value = HTTPAdmission

    let sources: MetricsSources
    let exposition: MetricsExposition
    let registry = TCPConnectionRegistry(limit: MetricsServer.connectionLimit, perKeyLimit: MetricsServer.connectionsPerClient)
    let limitLog: ThrottledLog

    init(sources: MetricsSources, exposition: MetricsExposition, logger: Logger) {
        self.sources = sources
        self.exposition = exposition
        limitLog = ThrottledLog(logger: logger)
    }

    private var http: HTTP1Channel {
        let sources = sources
        let exposition = exposition
        return HTTP1Channel(
            responder: { request, writer, _ in
                let response = await Self.answer(request, sources: sources, exposition: exposition)
                try await writer.write(response: response.head, body: response.body)
            },
            configuration: .init(additionalChannelHandlers: [CloseAfterResponse()]))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTPAdmission> {
        let client = ClientAddress(channel.remoteAddress)
        switch registry.admit(client, now: NIODeadline.now().uptimeNanoseconds, close: { channel.close(promise: nil) }) {
        case .refused:
            limitLog.warning(
                "metrics-total",
                "refusing metrics connections: \(MetricsServer.connectionLimit) are open, at most \(MetricsServer.connectionsPerClient) per client address",
                metadata: ["client.ip": "\(channel.remoteAddress?.ipAddress ?? "?")"])
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(.refused(channel))
        case .admitted(let entry, _):
            let registry = registry
            channel.closeFuture.whenComplete { _ in registry.release(entry) }
        }
        let deadline = channel.eventLoop.scheduleTask(in: MetricsServer.connectionDeadline) { channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in deadline.cancel() }
        return http.setup(channel: channel, logger: logger).map { .accepted($0) }
    }

    func handle(value: HTTPAdmission, logger: Logger) async {
        guard case .accepted(let wrapped) = value else { return }
        await http.handle(value: wrapped, logger: logger)
    }

    /// The exposition for `GET /metrics`, a short plain-text error otherwise. Any query string is
    /// ignored (Prometheus may add one).
    static func answer(_ request: Request, sources: MetricsSources, exposition: MetricsExposition) async -> Response {
        guard request.uri.path == "/metrics" else {
            return text(.notFound, "Not found. The metrics are at /metrics.\n")
        }
        guard request.method == .get else {
            var response = text(.methodNotAllowed, "Only GET is served at /metrics.\n")
            response.headers[.allow] = "GET"
            return response
        }
        return text(.ok, exposition.render(await sources.read()), contentType: MetricsExposition.contentType)
    }

    static func text(_ status: HTTPResponse.Status, _ body: String, contentType: String = "text/plain; charset=utf-8") -> Response {
        text(status, Array(body.utf8), contentType: contentType)
    }

    static func text(_ status: HTTPResponse.Status, _ body: [UInt8], contentType: String) -> Response {
        Response(status: status, headers: [.contentType: contentType, .contentLength: "\(body.count)", .connection: "close"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
