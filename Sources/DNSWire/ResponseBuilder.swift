/// Builds a reply to a `DNSQuery` directly in wire form, for the server's hot path.
///
/// Order of calls: `start`, then `appendAnswer`/`appendAuthority`/`appendAdditional` in section
/// order, then `finish`, which adds the OPT record and fits the reply into the client's limit.
/// Keep one builder per event loop: its buffers keep their capacity across replies.
public struct DNSResponseBuilder: Sendable {
    public private(set) var writer: DNSWriter
    private var questionName: [UInt8]
    private var rcode: DNSRcode
    private var questionEnd = 12
    private var additionalStart = 12
    private var section = 0
    private var counts: (answer: Int, authority: Int, additional: Int) = (0, 0, 0)
    /// Whether the question's suffixes are in the compression table yet; see `registerQuestion`.
    private var questionRegistered = false

    public init(capacity: Int = 1232) {
        writer = DNSWriter(capacity: capacity)
        questionName = []
        questionName.reserveCapacity(256)
        rcode = .noError
    }

    /// A copy of the reply; complete after `finish`. On the hot path use `withUnsafeBytes`.
    public var bytes: [UInt8] { writer.bytes }

    /// Lends the reply without copying it, to write it into a socket buffer.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try writer.withUnsafeBytes(body)
    }

    /// Starts a reply to `query` (RFC 1035 §4.1.1): same ID, opcode, RD and CD, QR set, the question
    /// copied with its case as received (clients using 0x20 randomisation compare it).
    public mutating func start(
        replyingTo query: DNSQuery, rcode: DNSRcode, authoritative: Bool = false, recursionAvailable: Bool = true
    ) {
        writer.reset()
        questionName.removeAll(keepingCapacity: true)
        questionName.append(contentsOf: query.name)
        self.rcode = rcode
        counts = (0, 0, 0)
        section = 0
        let header = DNSHeader(
            id: query.header.id, isResponse: true, opcode: query.header.opcode, authoritative: authoritative,
            recursionDesired: query.header.recursionDesired, recursionAvailable: recursionAvailable,
            checkingDisabled: query.header.checkingDisabled)
        writer.fields(12) { field in
            field.u16(header.id)
            field.u16(header.flags(rcodeBits: rcode.headerBits))
            field.u16(1)
            field.u16(0)
            field.u16(0)
            field.u16(0)
        }
        // Copied as is and registered for compression only if a later name needs the table:
        // the common blocked answer points at offset 12 directly and never hashes a name.
        writer.append(query.name)
        questionRegistered = false
        writer.fields(4) { field in
            field.u16(query.type.rawValue)
            field.u16(query.class.rawValue)
        }
        questionEnd = writer.count
        additionalStart = questionEnd
    }

    /// Starts a header-only reply to a packet the gate or the parser refused (FORMERR, NOTIMP):
    /// ID, opcode and RD copied from the raw header, QR set, no sections. Packets under 12 octets
    /// must be dropped instead; for them this writes an all-zero ID.
    public mutating func startError(replyingToHeaderOf packet: UnsafeRawBufferPointer, rcode: DNSRcode) {
        writer.reset()
        questionName.removeAll(keepingCapacity: true)
        self.rcode = rcode
        counts = (0, 0, 0)
        section = 0
        let id = packet.count >= 2 ? UInt16(packet[0]) << 8 | UInt16(packet[1]) : 0
        let flags = packet.count >= 4 ? UInt16(packet[2]) << 8 | UInt16(packet[3]) : 0
        var header = DNSHeader(id: id, flags: flags)
        header = DNSHeader(
            id: id, isResponse: true, opcode: header.opcode, recursionDesired: header.recursionDesired,
            recursionAvailable: true)
        writer.u16(id)
        writer.u16(header.flags(rcodeBits: rcode.headerBits))
        for _ in 0..<4 { writer.u16(0) }
        questionRegistered = true
        questionEnd = writer.count
        additionalStart = questionEnd
    }

    /// As `startError(replyingToHeaderOf:rcode:)` for an array.
    public mutating func startError(replyingToHeaderOf packet: [UInt8], rcode: DNSRcode) {
        packet.withUnsafeBytes { startError(replyingToHeaderOf: $0, rcode: rcode) }
    }

    /// The question name as a value, for building records owned by it; allocates.
    public var questionOwner: DNSName { DNSName(validatedWire: questionName.isEmpty ? [0] : questionName) }

    public mutating func appendAnswer(_ record: DNSRecord) throws(DNSWireError) {
        try append(record, section: 0)
    }

    /// An A record owned by the question name; the owner becomes a pointer to offset 12.
    public mutating func appendAnswerA(ttl: UInt32, _ address: IPv4Address) throws(DNSWireError) {
        try appendOwnedByQuestion(type: .a, ttl: ttl, rdlength: 4) { field in field.u32(address.rawValue) }
    }

    /// An AAAA record owned by the question name.
    public mutating func appendAnswerAAAA(ttl: UInt32, _ address: IPv6Address) throws(DNSWireError) {
        try appendOwnedByQuestion(type: .aaaa, ttl: ttl, rdlength: 16) { field in
            field.u32(UInt32(truncatingIfNeeded: address.high >> 32))
            field.u32(UInt32(truncatingIfNeeded: address.high))
            field.u32(UInt32(truncatingIfNeeded: address.low >> 32))
            field.u32(UInt32(truncatingIfNeeded: address.low))
        }
    }

    /// The SOA of a negative answer (RFC 2308 §3) owned by the question name, for a sinkhole that
    /// answers NODATA/NXDOMAIN as if each blocked name were its own zone. The owner is a pointer to
    /// the question and `soa` can be built once per configuration, so nothing is allocated.
    public mutating func appendAuthoritySOA(ttl: UInt32, _ soa: SOAData) throws(DNSWireError) {
        try enter(1)
        writeQuestionOwner()
        writer.u16(DNSType.soa.rawValue)
        writer.u16(DNSClass.in.rawValue)
        writer.u32(ttl)
        let lengthOffset = writer.count
        writer.u16(0)
        registerQuestion()
        writer.name(soa.primaryNameServer)
        writer.name(soa.responsibleMailbox)
        writer.u32(soa.serial)
        writer.u32(soa.refresh)
        writer.u32(soa.retry)
        writer.u32(soa.expire)
        writer.u32(soa.minimum)
        writer.patchU16(UInt16(writer.count - lengthOffset - 2), at: lengthOffset)
        try count(1)
        additionalStart = writer.count
    }

    /// A record in the authority section, such as the SOA of a negative answer (RFC 2308 §3).
    public mutating func appendAuthority(_ record: DNSRecord) throws(DNSWireError) {
        try append(record, section: 1)
    }

    public mutating func appendAdditional(_ record: DNSRecord) throws(DNSWireError) {
        try append(record, section: 2)
    }

    private mutating func enter(_ newSection: Int) throws(DNSWireError) {
        guard newSection >= section else { throw .sectionOutOfOrder }
        if newSection == 2 && section < 2 { additionalStart = writer.count }
        if newSection < 2 { additionalStart = max(additionalStart, writer.count) }
        section = newSection
    }

    private mutating func count(_ section: Int) throws(DNSWireError) {
        switch section {
        case 0: counts.answer += 1
        case 1: counts.authority += 1
        default: counts.additional += 1
        }
        guard counts.answer <= 65535, counts.authority <= 65535, counts.additional < 65535 else {
            throw .tooManyEntries(section: ["answer", "authority", "additional"][min(section, 2)])
        }
    }

    private mutating func append(_ record: DNSRecord, section: Int) throws(DNSWireError) {
        try enter(section)
        registerQuestion()
        try writer.write(record)
        try count(section)
        if section < 2 { additionalStart = writer.count }
    }

    /// The question name sits at offset 12 (RFC 1035 §4.1.1 fixes the header size), so a record
    /// it owns starts with the pointer C0 0C; the root is its single zero octet.
    private mutating func writeQuestionOwner() {
        if questionName.count <= 1 { writer.u8(0) } else { writer.u16(0xC00C) }
    }

    private mutating func registerQuestion() {
        guard !questionRegistered else { return }
        questionRegistered = true
        writer.register(wire: questionName, at: 12)
    }

    private mutating func appendOwnedByQuestion(
        type: DNSType, ttl: UInt32, rdlength: UInt16, rdata: (inout FieldCursor) -> Void
    ) throws(DNSWireError) {
        try enter(0)
        let owner: UInt16 = questionName.count <= 1 ? 0 : 0xC00C
        // Owner, TYPE, CLASS, TTL, RDLENGTH and RDATA as one run; the root owner is one octet.
        writer.fields((owner == 0 ? 1 : 2) + 10 + Int(rdlength)) { field in
            if owner == 0 { field.u8(0) } else { field.u16(owner) }
            field.u16(type.rawValue)
            field.u16(DNSClass.in.rawValue)
            field.u32(ttl)
            field.u16(rdlength)
            rdata(&field)
        }
        try count(0)
        additionalStart = writer.count
    }

    /// Completes the reply: adds the OPT record when `edns` is given (RFC 6891 §7: a reply to an
    /// EDNS query carries one) with `extendedErrors` as options (RFC 8914 §2), fills in the counts,
    /// and fits the whole into `limit` octets (RFC 1035 §4.2.1): first by dropping additional
    /// records, then by dropping all records and setting TC, keeping the question and the OPT
    /// record, and last by dropping the OPT's options. Returns the reply's length.
    @discardableResult
    public mutating func finish(
        edns: EDNS?, extendedErrors: [ExtendedDNSError] = [], limit: Int = 65535
    ) throws(DNSWireError) -> Int {
        guard rcode.rawValue <= 15 || edns != nil else { throw .extendedRcodeWithoutEDNS(rcode: rcode) }
        let limit = min(max(limit, 12), 65535)
        var optSize = 0
        if let edns {
            optSize = 11
            for option in edns.options { optSize += 4 + option.data.count }
            for error in extendedErrors { optSize += 6 + error.extraText.utf8.count }
        }
        var truncated = false
        if writer.count + optSize > limit {
            // RFC 2181 §9: omitting additional records needs no TC.
            writer.truncate(to: additionalStart)
            counts.additional = 0
            if writer.count + optSize > limit {
                writer.truncate(to: questionEnd)
                counts = (0, 0, 0)
                truncated = true
            }
        }
        var withOptions = true
        if truncated, writer.count + optSize > limit { withOptions = false }
        if let edns {
            try writer.write(
                edns, extendedRcode: rcode.extendedBits, options: withOptions, extendedErrors: extendedErrors)
        }
        if truncated { writer.orFlags(0x0200) }
        writer.patchU16(UInt16(counts.answer), at: 6)
        writer.patchU16(UInt16(counts.authority), at: 8)
        writer.patchU16(UInt16(counts.additional + (edns == nil ? 0 : 1)), at: 10)
        return writer.count
    }
}

extension DNSWriter {
    /// Sets bits in the header's flags word (offset 2), for TC after truncation.
    mutating func orFlags(_ bits: UInt16) {
        patchU16(readU16(at: 2) | bits, at: 2)
    }
}
