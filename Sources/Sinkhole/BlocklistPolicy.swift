import DNSWire

/// A policy from a plain list of domains, each blocked with its subdomains around the clock.
///
/// This is what `--blocklist FILE` gives before the rules of the helper (schedules, credits) are
/// in charge, and what the tests of the server use; it has no notion of time or profiles.
public struct BlocklistPolicy: QueryPolicy {
    public let blocked: DomainSuffixSet
    public let allowed: DomainSuffixSet
    /// Names treated as managed and open: forwarded with every TTL capped at `managedTTLCap`.
    public let managed: DomainSuffixSet
    public let managedTTLCap: UInt32

    public init(
        blocked: DomainSuffixSet, allowed: DomainSuffixSet = DomainSuffixSet(), managed: DomainSuffixSet = DomainSuffixSet(),
        managedTTLCap: UInt32 = 60
    ) {
        self.blocked = blocked
        self.allowed = allowed
        self.managed = managed
        self.managedTTLCap = max(managedTTLCap, 1)
    }

    public func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        // Allow always beats block (SPEC §1).
        if allowed.contains(lowercasedName: lowercasedName) { return .allowed }
        if blocked.contains(lowercasedName: lowercasedName) { return .blocked(ttlCap: PolicyDecision.maximumBlockedTTL) }
        return managed.contains(lowercasedName: lowercasedName) ? .managed(ttlCap: managedTTLCap) : .allowed
    }
}
