import DNSWire

/// A policy from a plain list of domains, each blocked with its subdomains around the clock.
///
/// This is what `--blocklist FILE` gives before the rules of the helper (schedules, credits) are
/// in charge, and what the tests of the server use; it has no notion of time or profiles.
public struct BlocklistPolicy: QueryPolicy {
    public let blocked: DomainSuffixSet
    public let allowed: DomainSuffixSet

    public init(blocked: DomainSuffixSet, allowed: DomainSuffixSet = DomainSuffixSet()) {
        self.blocked = blocked
        self.allowed = allowed
    }

    public func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        // Allow always beats block (SPEC §1).
        if allowed.contains(lowercasedName: lowercasedName) { return .allowed }
        return blocked.contains(lowercasedName: lowercasedName)
            ? .blocked(ttlCap: PolicyDecision.maximumBlockedTTL) : .allowed
    }
}
