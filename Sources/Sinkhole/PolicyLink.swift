import DNSWire

/// Asks the current policy about the question; answers blocked names and notes TTL caps.
public struct PolicyLink: ResolverLink {
    public let policies: PolicyStore
    public let mode: BlockingMode

    public init(policies: PolicyStore, mode: BlockingMode) {
        self.policies = policies
        self.mode = mode
    }

    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        let decision = policies.policy.decide(
            lowercasedName: context.query.lowercasedName, type: context.query.type, client: context.client)
        context.decision = decision
        if decision.isBlocked {
            context.route = .blocked
            LocalAnswer.writeBlocked(
                into: &context.builder, query: context.query, mode: mode,
                ttl: decision.ttlCap ?? PolicyDecision.maximumBlockedTTL, limit: context.replyLimit)
            return .builtReply
        }
        return next(context)
    }
}
