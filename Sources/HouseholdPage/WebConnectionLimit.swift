import Enforcement
import NIOCore
import NIOHTTPTypes
import Sinkhole
import Synchronization

/// Bounds on the household page's open connections (SPEC §9a; ARCHITECTURE: every limit is tested
/// by exceeding it): per device and in total, so one device that opens connections and sends
/// nothing cannot use up the helper's descriptors, which DNS needs, nor lock the others out.
///
/// A full pool does not turn newcomers away, as unbound and nginx do not: a few addresses holding
/// every slot with slow requests would otherwise keep the page from everyone until their deadline,
/// and then reconnect. A newcomer takes the slot of the connection that has waited longest with no
/// request in progress (a browser's kept-alive connection), else of the one whose request has been
/// arriving longest (a request trickling in a byte a second, or a connection that never sent one).
/// A connection whose request the helper is answering is never dropped; when every slot is such a
/// connection, the newcomer is closed. With the whole-request deadline (`[web] request_timeout`,
/// `IdleConnectionCloser`) a slow connection is cut anyway; this makes room before it is.
///
/// "Per device" is `PageDevice`: the MAC when the neighbour table knows the address, else the
/// IPv4 address or the IPv6 /64.
package final class WebConnectionLimit: Sendable {
    let perClient: Int
    let total: Int
    /// The MAC the kernel's neighbour table knows for an address (`NeighbourCache.mac(for:)`).
    let macOf: @Sendable (ClientAddress) -> UInt64?
    private let state = Mutex(State())

    package static let defaultPerClient = 32
    package static let defaultTotal = 256

    private struct State {
        var open: [ObjectIdentifier: Connection] = [:]
        var byClient: [PageDevice: Int] = [:]
    }

    /// Why a newcomer was closed.
    enum Refusal: Equatable {
        /// Its device (`PageDevice`) holds `perClient` connections already.
        case perClient
        /// Every slot holds a request being answered.
        case full
    }

    enum Admission {
        case admitted(Connection, evicted: Connection?)
        case refused(Refusal)
    }

    package init(perClient: Int = defaultPerClient, total: Int = defaultTotal, macOf: @escaping @Sendable (ClientAddress) -> UInt64? = { _ in nil }) {
        self.total = max(total, 1)
        self.perClient = max(min(perClient, self.total), 1)
        self.macOf = macOf
    }

    /// The address the bounds count a connection under: an IPv4 address as it is (also when it
    /// arrives IPv4-mapped on an IPv6 socket, `::ffff:a.b.c.d`), an IPv6 address as its /64.
    static func key(_ address: ClientAddress) -> ClientAddress { address.deviceKey }

    /// Counts a new connection from `address`, making room as the type says when every slot is
    /// taken. The dropped connection is closed before this returns; a refused newcomer is not
    /// (the caller closes it).
    func admit(_ address: SocketAddress?, now: UInt64, close: @escaping @Sendable () -> Void) -> Admission {
        let client = device(ClientAddress(address))
        let connection = Connection(client: client, now: now, close: close)
        let outcome: Admission = state.withLock { state in
            let held = state.byClient[client, default: 0]
            if held >= perClient { return .refused(.perClient) }
            var evicted: Connection?
            if state.open.count >= total {
                guard let victim = Self.victim(in: state.open.values) else { return .refused(.full) }
                Self.remove(victim, from: &state)
                evicted = victim
            }
            state.open[ObjectIdentifier(connection)] = connection
            state.byClient[client, default: 0] += 1
            return .admitted(connection, evicted: evicted)
        }
        if case .admitted(_, let evicted?) = outcome { evicted.close() }
        return outcome
    }

    /// Gives back the slot of `connection`, unless its eviction already did.
    func release(_ connection: Connection) {
        state.withLock { state in Self.remove(connection, from: &state) }
    }

    /// Connections counted now.
    var count: Int { state.withLock { $0.open.count } }

    /// Connections counted now under `address`'s device.
    func count(for address: ClientAddress) -> Int { state.withLock { $0.byClient[device(address), default: 0] } }

    /// The device `address` is counted as.
    func device(_ address: ClientAddress) -> PageDevice { PageDevice(address, mac: macOf(address)) }

    /// The longest idle connection, else the one whose request has been arriving longest; never
    /// one being answered. A scan of at most `total` entries, only when the pool is full.
    private static func victim(in open: Dictionary<ObjectIdentifier, Connection>.Values) -> Connection? {
        var idle: (Connection, UInt64)?
        var receiving: (Connection, UInt64)?
        for connection in open {
            let (phase, since) = connection.progress
            switch phase {
            case .idle where since < idle?.1 ?? .max: idle = (connection, since)
            case .receiving where since < receiving?.1 ?? .max: receiving = (connection, since)
            default: break
            }
        }
        return idle?.0 ?? receiving?.0
    }

    private static func remove(_ connection: Connection, from state: inout State) {
        guard connection.markReleased() else { return }
        state.open[ObjectIdentifier(connection)] = nil
        let held = state.byClient[connection.client, default: 1] - 1
        state.byClient[connection.client] = held > 0 ? held : nil
    }

    /// One open connection as the pool sees it. Its handlers note its progress here without the
    /// pool's lock; the pool reads it only to choose whom to drop.
    final class Connection: Sendable {
        enum Phase: UInt64 {
            /// Between requests: nothing of a next request has arrived.
            case idle = 0
            /// A request is arriving (since the connection opened, or since its first byte).
            case receiving = 1
            /// A whole request arrived and is being answered.
            case answering = 2
        }

        /// The device it is counted under (`PageDevice`).
        let client: PageDevice
        /// The phase in the top two bits, the uptime in nanoseconds it began in the rest: one
        /// atomic, so a reader on another event loop never sees a phase with another's time.
        private let state: Atomic<UInt64>
        private let released = Atomic<Bool>(false)
        private let closer: @Sendable () -> Void
        private static let timeMask: UInt64 = (1 << 62) - 1

        /// A new connection is a request in progress from the start: one that sends nothing is
        /// as slow as one that sends a byte a second, and a device that just connected, about to
        /// send its request, must not be the first to go.
        init(client: PageDevice, now: UInt64, close: @escaping @Sendable () -> Void) {
            self.client = client
            state = Atomic(Self.pack(.receiving, now))
            closer = close
        }

        var progress: (Phase, UInt64) {
            let value = state.load(ordering: .relaxed)
            return (Phase(rawValue: value >> 62) ?? .answering, value & Self.timeMask)
        }

        func enter(_ phase: Phase, now: UInt64) { state.store(Self.pack(phase, now), ordering: .relaxed) }

        /// Bytes arrived: a next request has begun, unless one already was arriving or answered.
        /// Only the connection's own event loop writes, so a load and a store are enough.
        func bytesArrived(now: UInt64) {
            guard state.load(ordering: .relaxed) >> 62 == Phase.idle.rawValue else { return }
            enter(.receiving, now: now)
        }

        private static func pack(_ phase: Phase, _ now: UInt64) -> UInt64 { phase.rawValue << 62 | (now & timeMask) }

        /// True the first time only, so a slot is given back once.
        fileprivate func markReleased() -> Bool { !released.exchange(true, ordering: .acquiringAndReleasing) }

        fileprivate func close() { closer() }
    }

    /// First in the pipeline, before the HTTP decoder: the first byte of a next request moves an
    /// idle connection to `receiving`, which the decoder would only show once the head is whole.
    final class RequestStart: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let connection: Connection

        init(_ connection: Connection) { self.connection = connection }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            connection.bytesArrived(now: NIODeadline.now().uptimeNanoseconds)
            context.fireChannelRead(data)
        }
    }

    /// After the HTTP codec: a whole request moves the connection to `answering`, the end of its
    /// answer back to `idle`.
    final class RequestEnd: ChannelDuplexHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart
        let connection: Connection

        init(_ connection: Connection) { self.connection = connection }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .end = unwrapInboundIn(data) { connection.enter(.answering, now: NIODeadline.now().uptimeNanoseconds) }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) { connection.enter(.idle, now: NIODeadline.now().uptimeNanoseconds) }
            context.write(data, promise: promise)
        }
    }
}

/// What the household page's per-device limits count under (sign-in tries, actions per minute,
/// open connections). A device on the helper's own link is told apart by its MAC, from the
/// kernel's neighbour table (the one the profiles by MAC read): a home LAN is one IPv6 /64, so
/// counting by /64 let one device's wrong passwords or slow connections lock every other device
/// of the house out of the page. An address the table does not know (off-link, loopback) counts
/// as its IPv4 address or its /64 (`ClientAddress.deviceKey`): a host off-link may use any
/// address of its /64. A device that changes its MAC at will is a new device here; that is
/// inherent on a LAN (docs/household.md).
package enum PageDevice: Hashable, Sendable, CustomStringConvertible {
    case mac(UInt64)
    case network(ClientAddress)

    package init(_ address: ClientAddress, mac: UInt64?) {
        self = mac.map { .mac($0) } ?? .network(address.deviceKey)
    }

    package var description: String {
        switch self {
        case .mac(let mac): "MAC \(MACAddress.describe(mac))"
        case .network(let address): address.description
        }
    }
}
