import DNSWire

/// Sends the question to the upstream resolvers.
public struct ForwarderLink: ResolverLink {
    public let forwarder: Forwarder

    public init(forwarder: Forwarder) {
        self.forwarder = forwarder
    }

    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        context.route = .forwarded
        return .upstream(forwarder.resolve(OutgoingQuestion(context.query), on: context.eventLoop))
    }
}
