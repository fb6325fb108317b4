import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import ServiceKit
import ServiceLifecycle
import Sinkhole

/// The household page's listener (SPEC §9a) as one `Service` of the helper's group: Hummingbird's
/// HTTP/1.1 server on the helper's event loops (`TCPHTTPListener`, as the metrics endpoint), bound
/// where `[web] listen` says (loopback by default). A stop closes it at once and logs no error.
///
/// A listen address the configuration or a flag names must bind, or the start fails as it does for
/// DNS. The default address in use (another helper, another program) only turns the page off with
/// a warning: the page must never keep DNS from starting.
package struct HouseholdWebService: Service {
    let listen: HostPort
    let required: Bool
    let web: HouseholdWeb
    let group: any EventLoopGroup
    let logger: Logger
    let announce: @Sendable (String) -> Void
    var limit = WebConnectionLimit()
    /// A connection that sends nothing for this long is closed.
    var idleTimeout: TimeAmount = .seconds(30)
    /// A request must arrive whole, head and body, within this (`[web] request_timeout`).
    var requestTimeout: TimeAmount = WebSettings.defaultRequestTimeout

    package init(listen: HostPort, required: Bool, web: HouseholdWeb, group: any EventLoopGroup, logger: Logger, announce: @escaping @Sendable (String) -> Void,
                 limit: WebConnectionLimit = WebConnectionLimit(), idleTimeout: TimeAmount = .seconds(30), requestTimeout: TimeAmount = WebSettings.defaultRequestTimeout) {
        self.listen = listen
        self.required = required
        self.web = web
        self.group = group
        self.logger = logger
        self.announce = announce
        self.limit = limit
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
    }

    package func run() async throws {
        let listener: TCPHTTPListener<WebChannel>
        do {
            listener = try await TCPHTTPListener.bind(
                host: listen.host, port: listen.port, name: "web \(listen)", child: channel(), cap: limit.total, group: group, logger: logger)
        } catch where !required && Self.isAddressInUse(error) {
            logger.warning("the household page is off: \(listen) is in use; set [web] listen to another address, or \"\" to turn it off")
            // Stay in the group until it stops: a service that returns would stop the helper.
            try? await gracefulShutdown()
            return
        } catch where Self.isAddressInUse(error) {
            throw HelperStartError("cannot serve the household page on \(listen): the address is in use. Choose another with [web] listen "
                + "or --web-listen, or turn the page off with --web-listen off")
        } catch {
            throw HelperStartError("cannot serve the household page on \(listen): \(error). Check [web] listen or --web-listen")
        }
        let host = listen.host
        let shown = host.contains(":") ? "[\(host)]:\(listener.port)" : "\(host):\(listener.port)"
        // Scripts and tests read the bound port from this line, like the DNS listener's.
        announce("listening web \(shown)")
        logger.info("household page up", metadata: ["web.listen": "http://\(shown)/"])
        try await listener.serveUntilShutdown()
    }

    /// Each connection: the connection bounds (`WebConnectionLimit`), the whole-request deadline,
    /// and Hummingbird's request loop answering through the page's router with the device's
    /// address in the context.
    func channel() -> WebChannel {
        let responder = web.router().buildResponder()
        let logger = logger
        return WebChannel(
            responder: { request, writer, channel in
                let context = WebContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
                var response: Response
                do {
                    response = try await responder.respond(to: request, context: context)
                } catch {
                    // The router answers `HTTPResponseError`s itself; what reaches here is a bug.
                    logger.error("household page: a request failed", metadata: ["http.path": "\(request.uri.path)", "error": "\(error)"])
                    response = Response(status: .internalServerError)
                }
                response.headers[.date] = HTTPDate.now()
                try await writer.write(response: response.head, body: response.body)
            },
            limit: limit, idleTimeout: idleTimeout, requestTimeout: requestTimeout, limitLog: ThrottledLog(logger: logger))
    }

    static func isAddressInUse(_ error: any Error) -> Bool {
        if let io = error as? IOError { return io.errnoCode == EADDRINUSE }
        return "\(error)".contains("Address already in use")
    }
}

/// Each household-page connection: admitted by `WebConnectionLimit` (a newcomer to a full pool
/// takes the slot of the longest idle or slowest connection), held to the whole-request deadline
/// (`IdleConnectionCloser`, as on the control socket), then Hummingbird's HTTP/1 pipeline and
/// request loop.
struct WebChannel: ServerChildChannel {
    typealias Value = HTTPAdmission

    let responder: HTTPChannelHandler.Responder
    let limit: WebConnectionLimit
    let idleTimeout: TimeAmount
    let requestTimeout: TimeAmount
    let limitLog: ThrottledLog

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTPAdmission> {
        let admission = limit.admit(channel.remoteAddress, now: NIODeadline.now().uptimeNanoseconds, close: { channel.close(promise: nil) })
        let client = channel.remoteAddress?.ipAddress ?? "?"
        switch admission {
        case .refused(let refusal):
            let (key, message): (String, Logger.Message) = switch refusal {
            case .perClient:
                // One key for every address: keys per address would grow with what a LAN sends.
                ("web-client", "refusing household page connections from \(client): its device (its MAC, else its address or its /64 for IPv6) holds \(limit.perClient) already")
            case .full:
                ("web-full", "refusing household page connections: all \(limit.total) are answering requests")
            }
            limitLog.warning(key, message, metadata: ["client.ip": "\(client)"])
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(.refused(channel))
        case .admitted(let connection, let evicted):
            if let evicted {
                limitLog.warning("web-evict", "the household page's \(limit.total) connections are all open: closing the longest idle or slowest (from \(evicted.client)) for a new one", metadata: ["client.ip": "\(client)"])
            }
            let limit = limit
            channel.closeFuture.whenComplete { _ in limit.release(connection) }
            let requestTimeout = requestTimeout
            let http = HTTP1Channel(responder: responder, configuration: .init(
                additionalChannelHandlers: [WebConnectionLimit.RequestEnd(connection), IdleConnectionCloser(timeout: requestTimeout)],
                idleTimeout: idleTimeout))
            // First in the pipeline, before the HTTP decoder that `http` adds after it.
            return channel.pipeline.addHandler(WebConnectionLimit.RequestStart(connection))
                .flatMap { http.setup(channel: channel, logger: logger) }
                .map { .accepted($0) }
        }
    }

    func handle(value: HTTPAdmission, logger: Logger) async {
        guard case .accepted(let wrapped) = value else { return }
        await HTTP1Channel(responder: responder).handle(value: wrapped, logger: logger)
    }
}

/// The `Date` header's value (RFC 9110 §5.6.7, IMF-fixdate), such as `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDate {
    static func now() -> String { format(time(nil)) }

    static func format(_ seconds: time_t) -> String {
        var t = seconds
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
