import DNSWire
import NIOCore

/// The working state of one query as it walks the resolver chain.
///
/// One context belongs to one UDP listener's thread or one TCP connection's handler and is reused
/// for every query it serves, so the parse buffers and the reply builder keep their capacity and
/// the hot path does not allocate. It never leaves that thread; a link that answers later copies
/// what it needs into a `PendingQuestion` first. `eventLoop` is where such later answers complete:
/// the connection's loop, or the loop a UDP listener is paired with (its thread is not a loop, so
/// the links below use nothing that is confined to a loop).
///
/// Its fields are `@exclusivity(unchecked)`: the runtime's exclusivity check on every read and
/// write of a class's stored property (`swift_beginAccess`, a thread-local access set) was 7% of a
/// reply's CPU (bench/reply.sh). A context is confined to its thread, and the chain touches its fields
/// one link after another, never one field through two paths at once: a link passes
/// `&context.builder` or `&context.scratch` together with values read out of the other fields,
/// never with the context itself.
public final class QueryContext {
    /// The raw packet. Valid only while the chain runs synchronously (it points into the
    /// listener's or the channel's receive buffer).
    @exclusivity(unchecked) public internal(set) var packet: UnsafeRawBufferPointer
    /// The question, its policy and a cache hit, kept in one struct so renderers borrow them in
    /// place (see `QueryFacts`); read and written through `query`, `policy` and `cached`.
    @exclusivity(unchecked) var facts: QueryFacts
    @exclusivity(unchecked) public internal(set) var client: ClientAddress
    @exclusivity(unchecked) public internal(set) var transport: DNSTransport
    public let eventLoop: any EventLoop
    /// The local decision, filled in by the policy link and read by the links after it.
    @exclusivity(unchecked) public var decision: PolicyDecision
    /// Replies built here: gate errors, canaries, blocked answers.
    @exclusivity(unchecked) public var builder: DNSResponseBuilder
    /// Replies copied from the cache.
    @exclusivity(unchecked) public var scratch: [UInt8]
    /// Which link answered, for the metrics; the handler resets it for each query.
    @exclusivity(unchecked) public var route: QueryRoute = .local

    /// The parsed question and OPT record, filled in by the gate.
    public var query: DNSQuery {
        _read { yield facts.query }
        _modify { yield &facts.query }
    }

    /// The policy that decision came from, so the cache link checks CNAME targets against the same
    /// rules without taking the policy store's lock a second time for the query.
    public var policy: any QueryPolicy {
        _read { yield facts.policy }
        _modify { yield &facts.policy }
    }

    /// A cache hit, copied out of the cache's log under its lock and replayed from here.
    public var cached: AnswerParts {
        _read { yield facts.cached }
        _modify { yield &facts.cached }
    }

    public init(eventLoop: any EventLoop) {
        packet = UnsafeRawBufferPointer(start: nil, count: 0)
        facts = QueryFacts(query: DNSQuery(), policy: AllowAllPolicy(), cached: AnswerParts())
        client = .unknown
        transport = .udp
        self.eventLoop = eventLoop
        decision = .allowed
        builder = DNSResponseBuilder(capacity: 1232)
        scratch = []
        scratch.reserveCapacity(1232)
    }

    /// The largest reply this client takes: the EDNS or 512-octet limit over UDP (RFC 6891 §6.2.5),
    /// the 16-bit frame length over TCP (RFC 7766 §8).
    public var replyLimit: Int {
        transport == .udp ? query.udpReplyLimit(serverMaximum: DNSServerLimits.ednsPayloadSize) : 65535
    }

    /// What a deferred answer needs to know about the asker once this context serves another query.
    public var pending: PendingQuestion {
        PendingQuestion(query: query, limit: replyLimit, decision: decision)
    }
}

/// What the chain knows about the query in a context: the question, the policy it was decided
/// under, and a cache hit. The renderers take them through this struct's `mutating` methods, which
/// borrow them in place while the context's builder or scratch is written: passed as arguments
/// straight out of the class's storage, each was copied first, a retain and a release of each of
/// their arrays and references per query (bench/reply.sh). The methods mutate nothing; `mutating` is
/// what lets the compiler borrow `self` rather than copy it.
struct QueryFacts {
    var query: DNSQuery
    var policy: any QueryPolicy
    var cached: AnswerParts

    /// `LocalAnswer.writeBlocked` for this query.
    mutating func writeBlocked(into builder: inout DNSResponseBuilder, mode: BlockingMode, ttl: UInt32, limit: Int) {
        LocalAnswer.writeBlocked(into: &builder, query: query, mode: mode, ttl: ttl, limit: limit)
    }

    /// `AnswerRenderer.render` of the cache hit for this query, under its policy.
    mutating func renderCached(
        limit: Int, decision: PolicyDecision, client: ClientAddress, blocking: BlockingSettings, now: UInt64,
        scratch: inout [UInt8], builder: inout DNSResponseBuilder
    ) -> AnswerRenderer.Output {
        AnswerRenderer.render(
            cached, query: query, limit: limit, decision: decision, policy: policy, client: client, blocking: blocking,
            now: now, scratch: &scratch, builder: &builder)
    }
}

/// The server's fixed protocol numbers.
public enum DNSServerLimits {
    /// The EDNS UDP payload size we advertise and accept at most (DNS Flag Day 2020; SPEC §9).
    public static let ednsPayloadSize = 1232
}

/// A question waiting for the upstream, with what is needed to write its reply later.
public struct PendingQuestion: Sendable {
    public var query: DNSQuery
    public var limit: Int
    public var decision: PolicyDecision
}
