import NIOCore
import NIOConcurrencyHelpers
import Synchronization

/// One open TCP connection as the registry knows it. Its handler notes activity here
/// without taking the registry's lock.
public final class TCPConnectionEntry: Sendable {
    public let client: ClientAddress
    /// Uptime in nanoseconds of the last query read or reply written.
    private let lastActive: Synchronization.Atomic<UInt64>
    /// Uptime in nanoseconds since when its client has taken none of its replies (the channel is
    /// not writable: `tcp_unsent_bytes` wait for it); 0 while it reads them.
    private let stalledAt = Synchronization.Atomic<UInt64>(0)
    /// Set once the slot is given back, by the connection closing or by an eviction, whichever
    /// comes first, so that it is given back once.
    private let released = Synchronization.Atomic<Bool>(false)
    private let closer: @Sendable () -> Void

    init(client: ClientAddress, now: UInt64, close: @escaping @Sendable () -> Void) {
        self.client = client
        lastActive = Synchronization.Atomic(now)
        closer = close
    }

    public func touch(_ now: UInt64) { lastActive.store(now, ordering: .relaxed) }
    var idleSince: UInt64 { lastActive.load(ordering: .relaxed) }

    /// Notes that the client stopped taking its replies at `now` (nil: it takes them again).
    public func stalled(_ now: UInt64?) { stalledAt.store(now.map { max($0, 1) } ?? 0, ordering: .relaxed) }
    /// Since when the client has taken none of its replies; nil while it reads them.
    var stalledSince: UInt64? { let at = stalledAt.load(ordering: .relaxed); return at == 0 ? nil : at }

    /// True the first time only.
    func markReleased() -> Bool { !released.exchange(true, ordering: .acquiringAndReleasing) }

    func close() { closer() }
}

/// Open TCP connections (DNS over TCP, the metrics endpoint) across all event loops, in total and
/// per client address (RFC 7766 §6.2.3), with fairness when the total is reached.
///
/// A client with many source addresses (`tcp_connections_per_client` each) could otherwise hold
/// every slot. When all are taken, a newcomer is not refused if some address holds at least two
/// more connections than the newcomer's would (or the newcomer's holds none and some connection is
/// stalled): of those, the connection whose client has taken none of its replies for longest (a
/// stalled one: it pipelines queries and never reads, as unbound and nginx drop the slowest
/// connection first) is closed, else the largest holder's longest-idle one (RFC 7766 §6.2.3 lets a
/// server close idle connections first).
///
/// Not any stalled connection for any newcomer: the slow readers' own reconnects then displaced
/// their stalled connections, ~1,400 a second, each new one answered until it stalled in turn
/// (a few thousand replies: the client's receive window and the kernel's send buffer), and the
/// event loops never caught up (another client's p99 200–300 ms). An address with an equal share
/// is refused, cheaply, on the accepting thread; a stalled connection then holds its slot until
/// its idle timeout, when its slot is taken by whoever comes first.
///
/// Slow readers from ten addresses (320 connections pipelining, never reading) kept every slot
/// stalled until its idle timeout, and a newcomer from an address with an equal share was refused.
/// A stalled connection has had about 4,000 replies by then (the client's receive window and the
/// kernel's send buffer take them before the water mark counts any); dropping it costs nothing a
/// reader would miss. Its address is not refused further connections: a household's devices may
/// share one (NAT, a local stub resolver), and one stuck program must not cut off the rest.
/// The lock is held for a counter update, and for a scan of at most `limit` entries only when full.
public final class TCPConnectionRegistry: Sendable {
    public enum Admission {
        case admitted(TCPConnectionEntry, evicted: TCPConnectionEntry?)
        case refused(ConnectionSlots<ClientAddress>.Refusal)
    }

    private struct State {
        var open = 0
        var byClient: [ClientAddress: [ObjectIdentifier: TCPConnectionEntry]] = [:]
    }

    private let state = NIOLockedValueBox(State())
    public let limit: Int
    public let perKeyLimit: Int

    public init(limit: Int, perKeyLimit: Int) {
        self.limit = max(limit, 1)
        self.perKeyLimit = max(min(perKeyLimit, limit), 1)
    }

    /// A bound of `limit` connections, each client allowed all of them (tests of the total alone).
    convenience init(limit: Int) { self.init(limit: limit, perKeyLimit: limit) }

    /// Registers a connection of `client`, evicting another client's longest-idle one when every
    /// slot is taken and that is fair. The evicted connection is closed before this returns.
    public func admit(_ client: ClientAddress, now: UInt64, close: @escaping @Sendable () -> Void) -> Admission {
        let entry = TCPConnectionEntry(client: client, now: now, close: close)
        let outcome: Admission = state.withLockedValue { state in
            let held = state.byClient[client]?.count ?? 0
            if held >= perKeyLimit { return .refused(.perKey(limit: perKeyLimit)) }
            var evicted: TCPConnectionEntry?
            if state.open >= limit {
                guard let victim = Self.longestStalled(in: state, newcomerHolds: held) ?? Self.victim(in: state, newcomerHolds: held) else {
                    return .refused(.total(limit: limit))
                }
                Self.remove(victim, from: &state)
                evicted = victim
            }
            state.open += 1
            state.byClient[client, default: [:]][ObjectIdentifier(entry)] = entry
            return .admitted(entry, evicted: evicted)
        }
        if case .admitted(_, let evicted?) = outcome { evicted.close() }
        return outcome
    }

    /// Gives back the slot of `entry`, unless an eviction already did.
    public func release(_ entry: TCPConnectionEntry) {
        state.withLockedValue { state in Self.remove(entry, from: &state) }
    }

    public var current: Int { state.withLockedValue { $0.open } }

    public func current(for client: ClientAddress) -> Int { state.withLockedValue { $0.byClient[client]?.count ?? 0 } }

    /// The connection whose client has taken none of its replies for longest, of an address that
    /// holds at least two more than the newcomer would (any, if the newcomer's holds none).
    private static func longestStalled(in state: State, newcomerHolds held: Int) -> TCPConnectionEntry? {
        var oldest: (entry: TCPConnectionEntry, since: UInt64)?
        for entries in state.byClient.values where held == 0 || entries.count > held + 1 {
            for entry in entries.values {
                guard let since = entry.stalledSince, since < oldest?.since ?? .max else { continue }
                oldest = (entry, since)
            }
        }
        return oldest?.entry
    }

    /// The longest-idle connection of the address holding the most, if it holds at least two more
    /// than the newcomer would have: evicting from an equal share would only trade places.
    private static func victim(in state: State, newcomerHolds held: Int) -> TCPConnectionEntry? {
        guard let largest = state.byClient.max(by: { $0.value.count < $1.value.count }), largest.value.count > held + 1 else { return nil }
        return largest.value.values.min { $0.idleSince < $1.idleSince }
    }

    private static func remove(_ entry: TCPConnectionEntry, from state: inout State) {
        guard entry.markReleased() else { return }
        state.open -= 1
        state.byClient[entry.client]?[ObjectIdentifier(entry)] = nil
        if state.byClient[entry.client]?.isEmpty == true { state.byClient[entry.client] = nil }
    }
}

extension ClientAddress {
    /// The client a DNS-over-TCP connection and its queries are counted under
    /// (`tcp_connections_per_client`, `tcp_queries_per_client`): an IPv4 address as it is, also
    /// when it arrives IPv4-mapped on a dual-stack socket (`::ffff:a.b.c.d`), and an IPv6 address
    /// by its /64. A host is given a whole /64 (RFC 7421) and may pick any address in it, so
    /// counting single IPv6 addresses gave one host 2^64 shares: a device with a few hundred
    /// addresses held every connection, each address one, and no newcomer could displace any
    /// (none holds two more). The household page counts its connections by the same key.
    public var deviceKey: ClientAddress {
        switch self {
        case .v6(let high, let low) where high == 0 && low >> 32 == 0xFFFF:
            .v4(UInt32(truncatingIfNeeded: low))
        case .v6(let high, _):
            .v6(high: high, low: 0)
        default:
            self
        }
    }
}

extension TCPConnectionRegistry.Admission {
    /// Says in the throttled log what this admission did to a connection from `address`: a refusal
    /// by which bound, or an eviction to make room. One wording for the listener's thread and for
    /// the handler that admits for itself.
    func log(to limitLog: ThrottledLog?, address: String, limit: Int) {
        switch self {
        case .refused(.total(let total)):
            limitLog?.warning("tcp-total", "refusing DNS-over-TCP connections: all \(total) are open (dns.tcp_connections)",
                              metadata: ["client.ip": "\(address)"])
        case .refused(.perKey(let perClient)):
            limitLog?.warning("tcp-client", "refusing DNS-over-TCP connections of a client that holds \(perClient) already (dns.tcp_connections_per_client)",
                              metadata: ["client.ip": "\(address)"])
        case .admitted(_, evicted: .some):
            limitLog?.warning(
                "tcp-evict", "all \(limit) DNS-over-TCP connections are open: closed the longest-idle one of the client holding the most, or first one whose client reads none of its replies (dns.tcp_connections)",
                metadata: ["client.ip": "\(address)"])
        case .admitted(_, evicted: .none):
            break
        }
    }
}
