import DNSWire

/// The gate (SPEC §9, ARCHITECTURE.md principle 3): decides from the header whether a packet is a
/// query worth parsing, then parses the question and OPT record and rejects what the rest of the
/// chain must never see.
public struct QueryGateLink: ResolverLink {
    public init() {}

    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        switch DNSQueryGate.decide(context.packet) {
        case .drop:
            return .drop
        case .reply(let rcode):
            LocalAnswer.writeHeaderError(into: &context.builder, packet: context.packet, rcode: rcode)
            return .builtReply
        case .proceed:
            break
        }
        do {
            try context.query.parse(context.packet)
        } catch {
            // The header was readable (the gate checked its length), so the client can learn that
            // its packet was malformed (RFC 1035 §4.1.1 FORMERR).
            LocalAnswer.writeHeaderError(into: &context.builder, packet: context.packet, rcode: .formatError)
            return .builtReply
        }
        // RFC 6891 §6.1.1: more than one OPT record is a format error.
        if context.query.optCount > 1 {
            LocalAnswer.writeHeaderError(into: &context.builder, packet: context.packet, rcode: .formatError)
            return .builtReply
        }
        // RFC 6891 §6.1.3: a version we do not speak gets BADVERS with our version (0) in the OPT.
        if let edns = context.query.edns, edns.version > 0 {
            LocalAnswer.writeEmpty(into: &context.builder, query: context.query, rcode: .badVersion, limit: context.replyLimit)
            return .builtReply
        }
        // Zone transfers (RFC 5936) are for authoritative servers; we hold no zones.
        if context.query.type.rawValue == 251 || context.query.type.rawValue == 252 {
            LocalAnswer.writeEmpty(into: &context.builder, query: context.query, rcode: .notImplemented, limit: context.replyLimit)
            return .builtReply
        }
        // The sinkhole serves the Internet class only. CHAOS questions (`version.bind`,
        // `hostname.bind`, `id.server`, `version.server`: RFC 4892) forwarded upstream would tell any
        // LAN device which resolver software the household uses and who runs it; answered REFUSED
        // here, as unbound does with `hide-version`/`hide-identity`. Hesiod, NONE, ANY and unassigned
        // classes go the same way: the rules, the cache and the blocked answers are all class IN, so
        // a question in another class is one the rest of the chain must never see or forward.
        if context.query.class != .in {
            LocalAnswer.writeEmpty(into: &context.builder, query: context.query, rcode: .refused, limit: context.replyLimit)
            return .builtReply
        }
        return next(context)
    }
}
