import DNSWire

/// How a blocked name is answered (SPEC §9). The default keeps apps quiet: an address that
/// connects nowhere rather than an error that makes them retry.
public enum BlockingMode: String, Sendable, CaseIterable {
    /// A → 0.0.0.0, AAAA → ::, other types NOERROR with no answer and an SOA.
    case null
    /// NXDOMAIN with an SOA.
    case nxdomain
    /// REFUSED.
    case refused
}

/// Writes the local answers: blocked names and canaries.
enum LocalAnswer {
    /// RFC 8914 §4.16: "Blocked", sent with every blocked answer to an EDNS client. A constant, so
    /// that passing it does not build an array per reply.
    static let blockedErrors = [ExtendedDNSError(infoCode: .blocked)]
    static let noErrors: [ExtendedDNSError] = []

    /// The SOA of the synthetic zone a blocked name pretends to be the apex of. Its MINIMUM is the
    /// negative-caching TTL of the answer (RFC 2308 §5), so it is set per answer.
    static let soaPrimary = try! DNSName("blocked.scrolloff.invalid")
    static let soaMailbox = try! DNSName("hostmaster.scrolloff.invalid")

    /// The blocked answer for `query` (SPEC §9), with `ttl` seconds on every record.
    static func writeBlocked(
        into builder: inout DNSResponseBuilder, query: DNSQuery, mode: BlockingMode, ttl: UInt32, limit: Int
    ) {
        switch mode {
        case .null:
            builder.start(replyingTo: query, rcode: .noError)
            if query.class == .in && query.type == .a {
                try? builder.appendAnswerA(ttl: ttl, .any)
            } else if query.class == .in && query.type == .aaaa {
                try? builder.appendAnswerAAAA(ttl: ttl, .any)
            } else {
                appendSOA(into: &builder, ttl: ttl)
            }
        case .nxdomain:
            builder.start(replyingTo: query, rcode: .nameError)
            appendSOA(into: &builder, ttl: ttl)
        case .refused:
            builder.start(replyingTo: query, rcode: .refused)
        }
        finish(&builder, query: query, errors: blockedErrors, limit: limit)
    }

    /// A negative answer with an SOA: NXDOMAIN or NODATA (RFC 2308 §2), for the canaries.
    static func writeNegative(
        into builder: inout DNSResponseBuilder, query: DNSQuery, rcode: DNSRcode, ttl: UInt32, limit: Int
    ) {
        builder.start(replyingTo: query, rcode: rcode)
        appendSOA(into: &builder, ttl: ttl)
        finish(&builder, query: query, errors: noErrors, limit: limit)
    }

    /// A reply with no records and `rcode`, keeping the question (SERVFAIL, BADVERS, REFUSED).
    static func writeEmpty(
        into builder: inout DNSResponseBuilder, query: DNSQuery, rcode: DNSRcode,
        errors: [ExtendedDNSError] = noErrors, limit: Int
    ) {
        builder.start(replyingTo: query, rcode: rcode)
        finish(&builder, query: query, errors: errors, limit: limit)
    }

    /// A header-only reply to a packet we could not parse (FORMERR, NOTIMP): RFC 1035 §4.1.1.
    static func writeHeaderError(into builder: inout DNSResponseBuilder, packet: UnsafeRawBufferPointer, rcode: DNSRcode) {
        builder.startError(replyingToHeaderOf: packet, rcode: rcode)
        _ = try? builder.finish(edns: nil)
    }

    private static func appendSOA(into builder: inout DNSResponseBuilder, ttl: UInt32) {
        let soa = SOAData(
            primaryNameServer: soaPrimary, responsibleMailbox: soaMailbox, serial: 1,
            refresh: 3600, retry: 600, expire: 86400, minimum: ttl)
        try? builder.appendAuthority(DNSRecord(name: builder.questionOwner, type: .soa, ttl: ttl, rdata: .soa(soa)))
    }

    /// Adds the OPT record when the client sent one (RFC 6891 §7), advertising our 1232 octets and
    /// echoing DO (RFC 3225 §3), and fits the reply to the client's size.
    private static func finish(
        _ builder: inout DNSResponseBuilder, query: DNSQuery, errors: [ExtendedDNSError], limit: Int
    ) {
        let edns = query.edns.map {
            EDNS(udpPayloadSize: UInt16(DNSServerLimits.ednsPayloadSize), dnssecOK: $0.dnssecOK)
        }
        _ = try? builder.finish(edns: edns, extendedErrors: edns == nil ? noErrors : errors, limit: limit)
    }
}
