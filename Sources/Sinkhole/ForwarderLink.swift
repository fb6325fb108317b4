import DNSWire

/// Sends the question to the upstream resolvers.
public struct ForwarderLink: ResolverLink {
    public let forwarder: Forwarder

    public init(forwarder: Forwarder) {
        self.forwarder = forwarder
    }

    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        context.route = .forwarded
        let question = OutgoingQuestion(context.query)
        let loop = context.eventLoop
        guard loop.inEventLoop else {
            // A UDP listener's thread: the exchange is made on the paired loop, so that its
            // allocations come from, and go back to, the loop's malloc arena (bench/soak.sh).
            let forwarder = forwarder
            return .upstream(loop.flatSubmit { forwarder.resolve(question, on: loop) })
        }
        return .upstream(forwarder.resolve(question, on: loop))
    }
}
