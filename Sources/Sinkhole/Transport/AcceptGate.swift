import NIOCore
import NIOConcurrencyHelpers

/// Bounds the descriptors a listener's connections hold, counted from `accept` to close, by not
/// accepting while `limit` are held (SPEC §9.6).
///
/// The connection caps (`ConnectionCounter`, the control and page limits) are checked where a
/// connection is set up, on the event loop it is given to. Under a flood that loop can lag far
/// behind the listener's, which goes on draining the kernel's backlog: every connection accepted
/// and not yet refused holds a descriptor meanwhile. A loaded CI run saw a flood of 400 connections
/// against a cap of 40 take all 200 descriptors that way, and a process out of descriptors is
/// aborted by libdispatch. The gate counts at accept instead, on the listener's own loop, and
/// stops asking for more (it holds back `read`, as NIO's `AcceptBackoffHandler` does) until one
/// closes; connections wait in the kernel's backlog, which holds no descriptor of ours.
///
/// `limit` is the cap plus ``slack``: newcomers past the cap must still be accepted so the cap's
/// own rules can refuse them or evict an idle connection for them, which keeps one client from
/// locking the others out.
public final class AcceptGate: Sendable {
    /// Connections a gate lets in past its listeners' cap, to be refused or make room by eviction,
    /// plus what one read of the listener may accept before the gate sees the count (NIO accepts
    /// up to four per read).
    public static let slack = 20

    public let limit: Int
    private let state = NIOLockedValueBox<State>(State())

    private struct State {
        var open = 0
        var parked: [ObjectIdentifier: Handler] = [:]
    }

    /// - Parameter cap: the connections the listeners' own rules allow; the gate adds ``slack``.
    public init(cap: Int) {
        limit = max(cap, 1) + Self.slack
    }

    /// Connections accepted and not yet closed, over every listener of the gate.
    public var open: Int { state.withLockedValue { $0.open } }

    /// A handler for one listener's server channel; listeners sharing a cap share one gate.
    public func handler() -> Handler { Handler(gate: self) }

    fileprivate func accepted(_ child: any Channel) {
        state.withLockedValue { $0.open += 1 }
        child.closeFuture.whenComplete { _ in self.closed() }
    }

    private func closed() {
        let waiting: [Handler] = state.withLockedValue { state in
            state.open -= 1
            guard state.open < limit, !state.parked.isEmpty else { return [] }
            defer { state.parked.removeAll() }
            return Array(state.parked.values)
        }
        for handler in waiting { handler.resume() }
    }

    /// Parks `handler` if the gate is full; false when it may read.
    fileprivate func parkIfFull(_ handler: Handler) -> Bool {
        state.withLockedValue { state in
            guard state.open >= limit else { return false }
            state.parked[ObjectIdentifier(handler)] = handler
            return true
        }
    }

    fileprivate func forget(_ handler: Handler) {
        _ = state.withLockedValue { $0.parked.removeValue(forKey: ObjectIdentifier(handler)) }
    }

    /// Counts the children a server channel accepts and withholds its `read` while the gate is full.
    public final class Handler: ChannelDuplexHandler, RemovableChannelHandler, @unchecked Sendable {
        // @unchecked: `context` is touched only on the listener's event loop (`resume` hops there).
        public typealias InboundIn = any Channel
        public typealias InboundOut = any Channel
        public typealias OutboundIn = NIOAny

        let gate: AcceptGate
        private var context: ChannelHandlerContext?
        private var eventLoop: (any EventLoop)?

        init(gate: AcceptGate) { self.gate = gate }

        public func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
            eventLoop = context.eventLoop
        }

        public func handlerRemoved(context: ChannelHandlerContext) {
            gate.forget(self)
            self.context = nil
        }

        public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            gate.accepted(unwrapInboundIn(data))
            context.fireChannelRead(data)
        }

        public func read(context: ChannelHandlerContext) {
            if gate.parkIfFull(self) { return }
            context.read()
        }

        public func channelInactive(context: ChannelHandlerContext) {
            gate.forget(self)
            context.fireChannelInactive()
        }

        /// A connection closed and the gate has room: ask for the accepts held back.
        fileprivate func resume() {
            eventLoop?.execute {
                guard let context = self.context, context.channel.isActive else { return }
                self.read(context: context)
            }
        }
    }
}
