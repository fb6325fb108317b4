/// What to do with a packet after looking at its 12-octet header only (SPEC §9; RFC 1035 §4.1.1).
public enum DNSGateDecision: Hashable, Sendable {
    /// Shorter than a header (no ID to answer with) or QR=1 (a response: answering it could
    /// start a loop between two servers). Send nothing.
    case drop
    /// Answer with this RCODE and no question, without parsing further: NOTIMP for an opcode
    /// other than QUERY, FORMERR for a QDCOUNT other than 1 (RFC 9619 §4).
    case reply(DNSRcode)
    /// A plausible query: run `DNSQuery.parse` next.
    case proceed
}

/// The first link of the query path: cheap checks on the header before any name is read.
public enum DNSQueryGate {
    /// Decides from the header alone; reads at most 12 octets.
    @inlinable
    public static func decide(_ packet: UnsafeRawBufferPointer) -> DNSGateDecision {
        guard packet.count >= 12 else { return .drop }
        let flagsHigh = packet[2]
        if flagsHigh & 0x80 != 0 { return .drop }
        if flagsHigh >> 3 & 0x0F != DNSOpcode.query.rawValue { return .reply(.notImplemented) }
        if packet[4] != 0 || packet[5] != 1 { return .reply(.formatError) }
        return .proceed
    }

    public static func decide(_ packet: [UInt8]) -> DNSGateDecision {
        packet.withUnsafeBytes { decide($0) }
    }
}
