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
        let policy = policies.policy
        let decision = policy.decide(
            lowercasedName: context.query.lowercasedName, type: context.query.type, client: context.client)
        context.policy = policy
        context.decision = decision
        if decision.isBlocked {
            context.route = .blocked
            // Read once for this answer: one atomic load, so mode and TTL come from the same reload.
            let settings = blocking.current
            LocalAnswer.writeBlocked(
                into: &context.builder, query: context.query, mode: settings.mode,
                ttl: settings.ttl(cap: decision.ttlCap), limit: context.replyLimit)
            return .builtReply
        }
        return next(context)
    }
}
