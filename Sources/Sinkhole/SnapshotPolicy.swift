import DNSWire
import DomainLists
import ScrollOffCore

/// The production policy: the DomainLists matcher maps the name to an entry set (allow beats
/// block, SPEC §1), and ScrollOffCore's `EnforcementSnapshot` decides for the client's profile at
/// the trusted time: blocked or open, and the TTL cap until the entry set's next change (SPEC §9).
///
/// Both parts are immutable; the helper builds a new `SnapshotPolicy` when lists or rules change
/// and swaps it into the `PolicyStore`. A lookup allocates nothing.
public struct SnapshotPolicy: QueryPolicy {
    public let matcher: DomainMatcher
    public let snapshot: EnforcementSnapshot
    public let profiles: ClientProfiles
    /// The trusted clock (SPEC §11), read once per query for the TTL count-down.
    public let now: @Sendable () -> Instant

    public init(
        matcher: DomainMatcher, snapshot: EnforcementSnapshot, profiles: ClientProfiles = ClientProfiles(),
        now: @escaping @Sendable () -> Instant
    ) {
        self.matcher = matcher
        self.snapshot = snapshot
        self.profiles = profiles
        self.now = now
    }

    public func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        let match = lowercasedName.withUnsafeBytes { matcher.match(wire: $0) }
        // An always-allow name is never blocked, not even by a strict curfew (SPEC §1, §2).
        if match.isAllowed { return .allowed }
        let decision = snapshot.decide(profile: profiles.profile(of: client), set: match.entrySet.rawValue, now: now())
        if decision.blocked { return .blocked(ttlCap: decision.ttlCap) }
        if decision.managed || decision.ttlCap != Decision.uncapped { return .managed(ttlCap: decision.ttlCap) }
        return .allowed
    }
}

/// Maps a client address to its profile index by CIDR (SPEC §9 "per-client profiles"); the first
/// matching range wins and everyone else gets the default profile 0.
public struct ClientProfiles: Sendable {
    public struct Range: Sendable, Hashable {
        public var address: ClientAddress
        public var prefixLength: Int
        public var profile: Int

        public init(address: ClientAddress, prefixLength: Int, profile: Int) {
            self.address = address
            self.prefixLength = prefixLength
            self.profile = profile
        }

        func contains(_ client: ClientAddress) -> Bool {
            switch (address, client) {
            case (.v4(let network), .v4(let host)):
                let bits = min(max(prefixLength, 0), 32)
                let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
                return network & mask == host & mask
            case (.v6(let nh, let nl), .v6(let hh, let hl)):
                let bits = min(max(prefixLength, 0), 128)
                let highMask: UInt64 = bits >= 64 ? ~0 : (bits == 0 ? 0 : ~UInt64(0) << (64 - bits))
                let lowMask: UInt64 = bits <= 64 ? 0 : (bits == 128 ? ~0 : ~UInt64(0) << (128 - bits))
                return nh & highMask == hh & highMask && nl & lowMask == hl & lowMask
            default:
                return false
            }
        }
    }

    public let ranges: [Range]

    public init(_ ranges: [Range] = []) {
        self.ranges = ranges
    }

    public func profile(of client: ClientAddress) -> Int {
        for range in ranges where range.contains(client) { return range.profile }
        return 0
    }
}
