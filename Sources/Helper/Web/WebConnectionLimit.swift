import NIOCore
import Synchronization

/// Bounds on the household page's open connections (SPEC §9a; ARCHITECTURE: every limit is tested
/// by exceeding it): per device and in total, so one device that opens connections and sends
/// nothing cannot use up the helper's descriptors, which DNS needs, nor lock the others out. With
/// the server's idle timeout, a silent connection is closed after `idleTimeout` anyway.
final class WebConnectionLimit: Sendable {
    let perClient: Int
    let total: Int
    private let open = Mutex<(total: Int, byClient: [String: Int])>((0, [:]))

    static let defaultPerClient = 32
    static let defaultTotal = 256

    init(perClient: Int = defaultPerClient, total: Int = defaultTotal) {
        self.perClient = perClient
        self.total = total
    }

    /// Counts a new connection from `client`; false (and nothing counted) when over a bound.
    func admit(_ client: String) -> Bool {
        open.withLock { state in
            let mine = state.byClient[client, default: 0]
            guard state.total < total, mine < perClient else { return false }
            state.total += 1
            state.byClient[client] = mine + 1
            return true
        }
    }

    func release(_ client: String) {
        open.withLock { state in
            state.total -= 1
            let mine = state.byClient[client, default: 1] - 1
            state.byClient[client] = mine > 0 ? mine : nil
        }
    }

    var count: Int { open.withLock { $0.total } }

    /// The handler each connection's pipeline gets: it closes a connection over the bounds at once.
    func handler() -> Gate { Gate(limit: self) }

    final class Gate: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
        typealias InboundIn = NIOAny
        let limit: WebConnectionLimit
        private var client: String?

        init(limit: WebConnectionLimit) { self.limit = limit }

        func handlerAdded(context: ChannelHandlerContext) {
            let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
            if limit.admit(address) {
                client = address
            } else {
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            releaseOnce()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { releaseOnce() }

        private func releaseOnce() {
            if let client { limit.release(client) }
            client = nil
        }
    }
}
