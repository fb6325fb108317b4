import DNSWire
import NIOCore

/// What a link decided about a query.
public enum Resolution {
    /// Send nothing (a response packet, a header too short to answer).
    case drop
    /// The reply is in `context.builder`.
    case builtReply
    /// The reply is in `context.scratch`.
    case scratchReply
    /// The reply comes later, fully written for this client.
    case later(EventLoopFuture<LaterReply>)
    /// An upstream answer is on its way; the cache link turns it into `later` for this client.
    case upstream(EventLoopFuture<CachedAnswer>)
}

/// A reply written after its query's context moved on (an upstream answer, a joined question).
public struct LaterReply: Sendable {
    public var bytes: [UInt8]
    /// The rules blocked the answer when it arrived (a CNAME chain through a blocked name, SPEC §9):
    /// the metrics count it as blocked, whatever route the query took to get it.
    public var blocked: Bool

    public init(_ bytes: [UInt8], blocked: Bool = false) {
        self.bytes = bytes
        self.blocked = blocked
    }
}

/// One step of the resolver chain (ARCHITECTURE.md principle 2, CoreDNS `ServeDNS`): answer the
/// query, or pass it on with `next(context)` and possibly look at what comes back.
public protocol ResolverLink: Sendable {
    func handle(_ context: QueryContext, next: ResolverNext) -> Resolution
}

/// The rest of the chain after a link.
public struct ResolverNext {
    let links: [any ResolverLink]
    let index: Int

    public func callAsFunction(_ context: QueryContext) -> Resolution {
        guard index < links.count else {
            // Nothing left to ask: say so rather than leave the client waiting.
            LocalAnswer.writeEmpty(into: &context.builder, query: context.query, rcode: .refused, limit: context.replyLimit)
            return .builtReply
        }
        return links[index].handle(context, next: ResolverNext(links: links, index: index + 1))
    }
}

/// The ordered links a query walks through.
public struct ResolverChain: Sendable {
    public let links: [any ResolverLink]

    public init(links: [any ResolverLink]) {
        self.links = links
    }

    /// Runs the chain for the packet in `context`. An `upstream` that reaches the top (a chain with
    /// no cache link) is rendered here, so callers only see replies.
    public func resolve(_ context: QueryContext) -> Resolution {
        let result = ResolverNext(links: links, index: 0)(context)
        if case .upstream(let future) = result {
            let pending = context.pending
            let client = context.client
            return .later(future.map { answer in
                AnswerRenderer.renderDetached(answer, for: pending, client: client, policy: AllowAllPolicy(), blocking: BlockingSettings())
            })
        }
        return result
    }

    /// Resolves one query packet (a UDP datagram or a TCP frame) from `client` in `context`: the
    /// per-query fields are reset, then the chain runs. This is how the UDP and TCP handlers answer,
    /// and how `scrolloff-bench reply` drives the same path without sockets.
    public func resolve(
        packet: UnsafeRawBufferPointer, client: ClientAddress, transport: DNSTransport, in context: QueryContext
    ) -> Resolution {
        context.client = client
        context.transport = transport
        context.decision = .allowed
        context.route = .local
        context.packet = packet
        defer { context.packet = UnsafeRawBufferPointer(start: nil, count: 0) }
        return resolve(context)
    }

    /// The sinkhole's chain. This is the one place it is built (ARCHITECTURE.md principle 2).
    ///
    /// - Parameters:
    ///   - blocking: mode and TTL of blocked answers, swappable by a reload.
    ///   - rateLimiter: per-client budgets; nil = no rate limit link at all.
    public static func standard(
        policies: PolicyStore, canaries: CanaryLink, blocking: BlockingSettingsStore, rateLimiter: ClientRateLimiter?,
        cache: AnswerCache, forwarder: Forwarder
    ) -> ResolverChain {
        var links: [any ResolverLink] = [
            // First, before any other work: a packet that is not a well-formed query (a response,
            // an unknown opcode, a bad count, a newer EDNS version) is refused or dropped here and
            // never costs a policy lookup, a cache slot or an upstream query (RFC 9267; SPEC §9).
            QueryGateLink(),
        ]
        if let rateLimiter {
            // Right after the gate: REFUSED needs a parsed question, and what the gate drops costs
            // nothing to count. Before everything else, so a client over its budget costs no policy
            // lookup, no urge record, no cache slot and no upstream query; canaries are counted too,
            // since a flood of them is still a flood.
            links.append(RateLimitLink(limiter: rateLimiter))
        }
        links += [
            // Canaries come before the rules: they answer the same for every client at every hour,
            // so that browsers turn off their own DoH even while no block is in force (SPEC §9).
            canaries,
            // The local decision before the cache and the network: a blocked name never reaches
            // an upstream, and a rule change applies to the very next query, cached name or not.
            // It also records the TTL cap of managed names for the links below.
            PolicyLink(policies: policies, blocking: blocking),
            // The cache after the decision (so it never answers for a blocked name) and before the
            // forwarder (so a hit never leaves the machine). It also joins identical in-flight
            // questions to one upstream query, and re-checks CNAME targets against the rules.
            CacheLink(cache: cache, policies: policies, blocking: blocking),
            // Last: the only link that talks to the network.
            ForwarderLink(forwarder: forwarder),
        ]
        return ResolverChain(links: links)
    }

}

/// SERVFAIL for a question whose answer could not be produced (RFC 1035 §4.1.1).
enum ServerFailure {
    static func reply(for pending: PendingQuestion) -> [UInt8] {
        var builder = DNSResponseBuilder(capacity: 512)
        LocalAnswer.writeEmpty(into: &builder, query: pending.query, rcode: .serverFailure, limit: pending.limit)
        return builder.bytes
    }
}
