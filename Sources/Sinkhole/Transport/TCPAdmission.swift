import NIOCore
import NIOConcurrencyHelpers

/// Admits DNS-over-TCP connections on the listener's own thread (`scrolloff-tcp`), as they are
/// accepted and before they are registered on an event loop of the shared group.
///
/// Deciding in each connection's `channelActive` meant a newcomer's slot, a refusal and an
/// eviction all waited for the loop it was given to; under slow readers from ten addresses that
/// loop was busy answering pipelines, the closes it owed kept `AcceptGate` full, and accepting
/// stopped: another client's new connection waited in the kernel's accept queue past its 2 s
/// deadline (22–37 of 400 in a debug build). Now a refused connection is never registered (its
/// close is one task on its loop, which holds no slot), the connection an eviction displaces is
/// told to close, and an admitted one carries its slot to the loop (`take(for:)`). The listener
/// never waits for a child loop to decide.
///
/// unbound and nginx decide where they accept, too: unbound stops accepting while all of its
/// `incoming-num-tcp` handlers are taken and gives connections accepted near that bound a short
/// timeout; nginx closes reusable (idle keep-alive) connections, oldest first, as soon as fewer
/// than 1/16 of `worker_connections` are free, so that a newcomer never waits for one to close.
final class TCPAdmission: Sendable {
    let registry: TCPConnectionRegistry
    let limitLog: ThrottledLog?
    /// Slots of connections admitted and not yet set up on their loop.
    private let handoff = NIOLockedValueBox<[ObjectIdentifier: TCPConnectionEntry]>([:])

    init(registry: TCPConnectionRegistry, limitLog: ThrottledLog?) {
        self.registry = registry
        self.limitLog = limitLog
    }

    /// The slot admitted for `channel`, once: its handler holds it from then on.
    func take(for channel: any Channel) -> TCPConnectionEntry? {
        handoff.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Connections admitted and not yet set up; for tests.
    var waitingForSetUp: Int { handoff.withLockedValue { $0.count } }

    /// Admits or refuses `child`; false when refused (it is being closed and must not be set up).
    func admit(_ child: any Channel) -> Bool {
        let client = ClientAddress(child.remoteAddress).deviceKey
        let address = child.remoteAddress?.ipAddress ?? "?"
        let outcome = registry.admit(client, now: NIODeadline.now().uptimeNanoseconds, close: { child.close(promise: nil) })
        outcome.log(to: limitLog, address: address, limit: registry.limit)
        switch outcome {
        case .refused:
            // Over a bound: refuse by closing at once, which clients treat as "try UDP or later".
            child.close(promise: nil)
            return false
        case .admitted(let entry, _):
            let key = ObjectIdentifier(child)
            handoff.withLockedValue { $0[key] = entry }
            // However the connection ends (set-up failed, evicted, closed by either side), the
            // slot is given back once (`release` ignores a second time).
            child.closeFuture.whenComplete { _ in
                _ = self.handoff.withLockedValue { $0.removeValue(forKey: key) }
                self.registry.release(entry)
            }
            return true
        }
    }

    /// The listener's handler: after `AcceptGate` (which counts every descriptor) and before
    /// NIO's own, which registers the connection on its loop.
    func handler() -> Handler { Handler(admission: self) }

    final class Handler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = any Channel
        typealias InboundOut = any Channel

        let admission: TCPAdmission

        init(admission: TCPAdmission) { self.admission = admission }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard admission.admit(unwrapInboundIn(data)) else { return }
            context.fireChannelRead(data)
        }
    }
}
