import DNSWire
import NIOConcurrencyHelpers

/// One socket the DNS server has bound.
public struct BoundListener: Hashable, Sendable {
    public var transport: DNSTransport
    /// The address as bound, with port 0 resolved to the port the kernel picked.
    public var address: HostPort

    public init(transport: DNSTransport, address: HostPort) {
        self.transport = transport
        self.address = address
    }
}

/// The sockets the `DNSServer` has actually bound, for `scrolloff doctor` (SPEC §11 "listener
/// up"): the configured addresses say what was asked for, this says what the kernel gave. Written
/// by the server at start and cleared when it stops listening; read by the control socket.
public final class BoundListeners: Sendable {
    private let held = NIOLockedValueBox<[BoundListener]>([])

    public init() {}

    /// The sockets bound now, in the order they were bound.
    public var current: [BoundListener] { held.withLockedValue { $0 } }

    func add(_ listener: BoundListener) { held.withLockedValue { $0.append(listener) } }

    func removeAll() { held.withLockedValue { $0.removeAll() } }
}
