import DNSWire
import NIOCore
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// The address a query came from, in a compact form a policy can match against CIDR ranges
/// (SPEC §9 "per-client profiles") without touching `SocketAddress`'s storage.
public enum ClientAddress: Hashable, Sendable {
    /// IPv4 in host byte order.
    case v4(UInt32)
    /// IPv6 as two 64-bit halves in host byte order.
    case v6(high: UInt64, low: UInt64)
    /// A client we could not place (a Unix socket, say); policies treat it as the default profile.
    case unknown

    public init(_ address: SocketAddress?) {
        switch address {
        case .v4(let a)?: self = Self(a.address)
        case .v6(let a)?: self = Self(a.address)
        default: self = .unknown
        }
    }

    /// The sender of a datagram as `recvmmsg` wrote it (`DatagramListener`).
    init(_ address: UnsafePointer<sockaddr>) {
        switch CInt(address.pointee.sa_family) {
        case AF_INET: self = Self(UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self))
        case AF_INET6: self = Self(UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self))
        default: self = .unknown
        }
    }

    private init(_ address: sockaddr_in) {
        self = .v4(UInt32(bigEndian: address.sin_addr.s_addr))
    }

    private init(_ address: sockaddr_in6) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        withUnsafeBytes(of: address.sin6_addr) { raw in
            for index in 0..<8 { high = high << 8 | UInt64(raw[index]) }
            for index in 8..<16 { low = low << 8 | UInt64(raw[index]) }
        }
        self = .v6(high: high, low: low)
    }
}

/// What the local rules say about one question (SPEC §9).
public enum PolicyDecision: Hashable, Sendable {
    /// Not a managed name: forward it and keep the upstream's TTLs.
    case allowed
    /// Answer locally with the blocking answer; its TTL is at most `ttlCap` seconds (≤ 10, SPEC §9).
    case blocked(ttlCap: UInt32)
    /// A name of one of the client's entries that is open now: forward it, but cap every TTL at
    /// `ttlCap` seconds (at least 1) so that blocking starts on time at the entry's next change.
    case managed(ttlCap: UInt32)

    /// SPEC §9: "blocked answers at most 10 s".
    public static let maximumBlockedTTL: UInt32 = 10

    /// The TTL cap this decision puts on answers, or nil when it puts none.
    public var ttlCap: UInt32? {
        switch self {
        case .allowed: nil
        case .blocked(let cap): min(max(cap, 1), Self.maximumBlockedTTL)
        case .managed(let cap): max(cap, 1)
        }
    }

    public var isBlocked: Bool {
        if case .blocked = self { return true }
        return false
    }

    /// Of two decisions about names in one answer (a CNAME chain), the stricter: blocked beats
    /// managed beats allowed, and the smaller cap wins.
    public func combined(with other: PolicyDecision) -> PolicyDecision {
        switch (self, other) {
        case (.blocked(let a), .blocked(let b)): .blocked(ttlCap: min(a, b))
        case (.blocked, _): self
        case (_, .blocked): other
        case (.managed(let a), .managed(let b)): .managed(ttlCap: min(a, b))
        case (.managed, _): self
        case (_, .managed): other
        default: .allowed
        }
    }
}

/// The local decision seam: "is this name blocked for this client now, and for how long" (SPEC §9).
///
/// Implementations are immutable snapshots: the server reads the current one from a `PolicyStore`
/// for every query, and the helper swaps in a new one when rules or lists change. `decide` runs on
/// the hot path for every query, so it must not allocate.
public protocol QueryPolicy: Sendable {
    /// - Parameters:
    ///   - lowercasedName: the question name in uncompressed wire form, ASCII-lowercased (RFC 4343).
    ///   - type: the question type; a policy may treat types differently (it usually does not).
    ///   - client: the querying address, for per-client profiles.
    func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision
}

/// A policy that blocks nothing, for a helper started with no lists.
public struct AllowAllPolicy: QueryPolicy {
    public init() {}
    public func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision { .allowed }
}

/// Holds the current policy and swaps it atomically, so a rule change applies from the next query
/// on without stopping the server (ARCHITECTURE.md "swaps it atomically").
public final class PolicyStore: Sendable {
    private let current: NIOLockedValueBox<any QueryPolicy>
    private let didReplace: (@Sendable (any QueryPolicy) -> Void)?

    /// - Parameter didReplace: called after every `replace`, so a policy built from this one can be
    ///   rebuilt off the hot path instead of reading this store on every query.
    public init(_ policy: any QueryPolicy, didReplace: (@Sendable (any QueryPolicy) -> Void)? = nil) {
        current = NIOLockedValueBox(policy)
        self.didReplace = didReplace
    }

    /// The policy in force now. The lock is held only to copy one reference.
    public var policy: any QueryPolicy {
        current.withLockedValue { $0 }
    }

    /// The policy replaced is released after the lock is let go: if this is its last reference,
    /// freeing it (a matcher of tens of MB) under the lock would hold up every query's read above.
    /// - Returns: the policy replaced, for a caller that frees it elsewhere (the helper hands it
    ///   to a low-priority thread, so that neither it nor an event loop frees a matcher).
    @discardableResult
    public func replace(with policy: any QueryPolicy) -> any QueryPolicy {
        var replaced: any QueryPolicy = policy
        current.withLockedValue { swap(&$0, &replaced) }
        didReplace?(policy)
        return replaced
    }
}
