import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Sinkhole

/// The household page's listener (SPEC §9a) as one `Service` of the helper's group: Hummingbird's
/// HTTP/1.1 server on the helper's event loops, bound where `[web] listen` says (loopback by default).
///
/// A listen address the configuration or a flag names must bind, or the start fails as it does for
/// DNS. The default address in use (another helper, another program) only turns the page off with
/// a warning: the page must never keep DNS from starting.
struct HouseholdWebService: Service {
    let listen: HostPort
    let required: Bool
    let web: HouseholdWeb
    let group: any EventLoopGroup
    let logger: Logger
    let announce: @Sendable (String) -> Void
    var limit = WebConnectionLimit()
    /// A connection that sends nothing for this long is closed.
    var idleTimeout: TimeAmount = .seconds(30)

    func run() async throws {
        let router = web.router()
        let host = listen.host
        let announce = announce
        let logger = logger
        let limit = limit
        let application = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: [limit.handler()], idleTimeout: idleTimeout)),
            configuration: .init(address: .hostname(host, port: listen.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shown = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
                // Scripts and tests read the bound port from this line, like the DNS listener's.
                announce("listening web \(shown)")
                logger.info("household page up", metadata: ["web.listen": "http://\(shown)/"])
            },
            eventLoopGroupProvider: .shared(group),
            logger: logger)
        do {
            try await application.run()
        } catch where !required && Self.isAddressInUse(error) {
            logger.warning("the household page is off: \(listen) is in use; set [web] listen to another address, or \"\" to turn it off")
            // Stay in the group until it stops: a service that returns would stop the helper.
            try? await gracefulShutdown()
        } catch where Self.isAddressInUse(error) {
            throw HelperStartError("cannot serve the household page on \(listen): the address is in use. Choose another with [web] listen "
                + "or --web-listen, or turn the page off with --web-listen off")
        } catch let error as IOError {
            throw HelperStartError("cannot serve the household page on \(listen): \(error.description). Check [web] listen or --web-listen")
        }
    }

    static func isAddressInUse(_ error: any Error) -> Bool {
        if let io = error as? IOError { return io.errnoCode == EADDRINUSE }
        return "\(error)".contains("Address already in use")
    }
}
