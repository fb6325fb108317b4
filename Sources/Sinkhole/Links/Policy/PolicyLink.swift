import DNSWire

/// Asks the current policy about the question; answers blocked names and notes TTL caps.
public struct PolicyLink: ResolverLink {
    public let policies: PolicyStore
    /// Mode and TTL of the blocked answer, swapped by a configuration reload.
    public let blocking: BlockingSettingsStore

    public init(policies: PolicyStore, blocking: BlockingSettingsStore) {
        self.policies = policies
        self.blocking = blocking
    }

    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        // One copy out of the store (taken under its lock), then swapped into the context, not
        // copied again: each copy of the policy is a retain and a release per query (bench/reply.sh).
        // (`consume policy` would say it plainly; Swift 6.3 rejects it for an existential.)
        var policy = policies.policy
        let decision = policy.decide(
            lowercasedName: context.query.lowercasedName, type: context.query.type, client: context.client)
        swap(&context.policy, &policy)
        // Not kept past this query: a context kept the policy of its last query until its next,
        // so after a rule change or list refresh the old policy's last reference, and with it the
        // free of a matcher of tens of MB, was an event loop's (SPEC §9.10: a refresh must not stall
        // answers). A later reply reads the store again (`CacheLink.renderLater`).
        defer { context.policy = AllowAllPolicy() }
        context.decision = decision
        if decision.isBlocked {
            context.route = .blocked
            // Read once for this answer: one atomic load, so mode and TTL come from the same reload.
            let settings = blocking.current
            let limit = context.replyLimit
            context.facts.writeBlocked(
                into: &context.builder, mode: settings.mode, ttl: settings.ttl(cap: decision.ttlCap), limit: limit)
            return .builtReply
        }
        return next(context)
    }
}
