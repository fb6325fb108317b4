/// Where the patchable fields of a message sit, found in one validating pass without building
/// values: what a cache needs to serve stored reply bytes with a new ID, the client's question
/// case and aged TTLs, instead of serializing a `DNSMessage` per hit.
public struct DNSMessageLayout: Hashable, Sendable {
    /// Which section a record is in (RFC 1035 §4.1).
    public enum Section: Hashable, Sendable { case answer, authority, additional }

    /// Offset just past the first question's name; the name itself starts at 12. Nil without a
    /// question.
    public private(set) var questionNameEnd: Int?
    /// Offsets of the 32-bit TTL field of every record, in wire order, with its section. OPT is
    /// left out: its TTL field holds EDNS flags (RFC 6891 §6.1.3).
    public private(set) var ttlFields: [(offset: Int, section: Section)]

    public static func == (lhs: DNSMessageLayout, rhs: DNSMessageLayout) -> Bool {
        lhs.questionNameEnd == rhs.questionNameEnd && lhs.ttlFields.elementsEqual(rhs.ttlFields) { $0 == $1 }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(questionNameEnd)
        for field in ttlFields {
            hasher.combine(field.offset)
            hasher.combine(field.section)
        }
    }

    /// Walks `packet` with the same limits as the full parser (RFC 9267) but skips RDATA other
    /// than the names of the RFC 1035 types. Throws `pointerReadsTTL` when a compression pointer
    /// reads a TTL field as name octets: rewriting that TTL would change a name, so such a reply
    /// (never sent by an honest server) must be re-serialized rather than patched.
    public init(parsing packet: UnsafeRawBufferPointer) throws(DNSWireError) {
        guard packet.count >= 12 else { throw .truncatedHeader(length: packet.count) }
        var reader = WireReader(packet, offset: 12)
        let qdcount = Int(packet.headerWord(4))
        let ancount = Int(packet.headerWord(6))
        let nscount = Int(packet.headerWord(8))
        let arcount = Int(packet.headerWord(10))
        try DNSMessage.checkCounts(question: qdcount, records: ancount + nscount + arcount, reader: reader)
        questionNameEnd = nil
        ttlFields = []
        // Names are checked against TTL fields only once all fields are known: a pointer goes
        // backward, but the labels read from its target may run forward over any later octet,
        // even from a question name.
        var compressedNames: [Int] = []
        for index in 0..<qdcount {
            let nameStart = reader.offset
            if try reader.skipNameReportingPointer() { compressedNames.append(nameStart) }
            if index == 0 { questionNameEnd = reader.offset }
            try reader.require(4)
            reader.offset += 4
        }
        ttlFields.reserveCapacity(ancount + nscount + arcount)
        for index in 0..<(ancount + nscount + arcount) {
            let ownerStart = reader.offset
            if try reader.skipNameReportingPointer() { compressedNames.append(ownerStart) }
            let type = DNSType(try reader.u16())
            let klass = DNSClass(try reader.u16())
            let ttlOffset = reader.offset
            try reader.require(4)
            reader.offset += 4
            let rdlengthOffset = reader.offset
            let rdlength = Int(try reader.u16())
            guard rdlength <= reader.remaining else {
                throw .rdataPastEnd(offset: rdlengthOffset, rdlength: rdlength, available: reader.remaining)
            }
            let rdataEnd = reader.offset + rdlength
            if type != .opt {
                let section: Section = index < ancount ? .answer : index < ancount + nscount ? .authority : .additional
                ttlFields.append((ttlOffset, section))
                try Self.findRDATANames(
                    packet, type: type, class: klass, at: reader.offset, end: rdataEnd, into: &compressedNames)
            }
            reader.offset = rdataEnd
        }
        for start in compressedNames { try checkPointerRuns(packet, nameAt: start) }
    }

    /// Collects the compressed names inside RDATA that the parser decompresses (RFC 3597 §4),
    /// since rewriting a TTL they read through a pointer would change them too.
    private static func findRDATANames(
        _ packet: UnsafeRawBufferPointer, type: DNSType, class klass: DNSClass, at start: Int, end: Int,
        into names: inout [Int]
    ) throws(DNSWireError) {
        // The whole packet, as in the parser: labels reached through a pointer may lie anywhere
        // after the target, also past this RDATA; only the in-place part must end inside it.
        var reader = WireReader(packet, offset: start)
        func name() throws(DNSWireError) {
            let nameStart = reader.offset
            if try reader.skipNameReportingPointer() { names.append(nameStart) }
            guard reader.offset <= end else { throw .malformedRDATA(offset: start, type: type) }
        }
        switch DNSRData.kind(type: type, class: klass) {
        case .cname, .ns, .ptr:
            try name()
        case .mx:
            guard end - start >= 3 else { throw .malformedRDATA(offset: start, type: type) }
            reader.offset += 2
            try name()
        case .soa:
            try name()
            try name()
        case .a, .aaaa, .txt, .opaque:
            break
        }
    }

    /// Follows the pointers of an already validated name and throws if any octet read through a
    /// pointer lies in a TTL field.
    private func checkPointerRuns(_ packet: UnsafeRawBufferPointer, nameAt start: Int) throws(DNSWireError) {
        var position = start
        var runStart = -1
        var hops = 0
        while position < packet.count, hops <= NameCodec.maxPointers {
            let first = packet[position]
            if first & 0xC0 == 0xC0 {
                guard position + 1 < packet.count else { return }
                if runStart >= 0 { try checkRun(runStart..<position + 2) }
                position = Int(first & 0x3F) << 8 | Int(packet[position + 1])
                runStart = position
                hops += 1
                continue
            }
            if first == 0 {
                if runStart >= 0 { try checkRun(runStart..<position + 1) }
                return
            }
            position += 1 + Int(first)
        }
    }

    /// Binary search: TTL fields are recorded in increasing offset order.
    private func checkRun(_ run: Range<Int>) throws(DNSWireError) {
        var low = 0
        var high = ttlFields.count
        while low < high {
            let middle = (low + high) / 2
            if ttlFields[middle].offset + 4 <= run.lowerBound { low = middle + 1 } else { high = middle }
        }
        if low < ttlFields.count, ttlFields[low].offset < run.upperBound {
            throw .pointerReadsTTL(ttlOffset: ttlFields[low].offset)
        }
    }

    public init(parsing bytes: [UInt8]) throws(DNSWireError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DNSWireError) in try DNSMessageLayout(parsing: buffer) }
        }
        self = try result.get()
    }

    /// Ages every TTL in `bytes` (which must be the packet this layout was made from) by
    /// `elapsed` seconds, stopping at zero (RFC 1035 §3.2.1: the TTL counts down while cached).
    public func age(_ bytes: inout [UInt8], by elapsed: UInt32) {
        for field in ttlFields where field.offset + 3 < bytes.count {
            let ttl = DNSMessageLayout.readTTL(bytes, at: field.offset)
            DNSMessageLayout.writeTTL(&bytes, at: field.offset, ttl > elapsed ? ttl - elapsed : 0)
        }
    }

    /// Lowers every TTL in `bytes` to at most `cap` (SPEC §9: blocked and managed names are
    /// capped so a block starts on time).
    public func cap(_ bytes: inout [UInt8], at cap: UInt32) {
        for field in ttlFields where field.offset + 3 < bytes.count {
            if DNSMessageLayout.readTTL(bytes, at: field.offset) > cap {
                DNSMessageLayout.writeTTL(&bytes, at: field.offset, cap)
            }
        }
    }

    /// Sets the message ID (RFC 1035 §4.1.1), for serving a stored reply to a new query.
    public static func setID(_ id: UInt16, in bytes: inout [UInt8]) {
        guard bytes.count >= 2 else { return }
        bytes[0] = UInt8(id >> 8)
        bytes[1] = UInt8(truncatingIfNeeded: id)
    }

    @inlinable static func readTTL(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    @inlinable static func writeTTL(_ bytes: inout [UInt8], at offset: Int, _ ttl: UInt32) {
        bytes[offset] = UInt8(ttl >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: ttl >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: ttl >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: ttl)
    }
}

extension DNSMessage {
    /// How long this reply may be cached, or nil when it says nothing cacheable.
    ///
    /// Positive (answers present): the smallest answer TTL. Negative (NXDOMAIN, or NOERROR with no
    /// answer): min(SOA TTL, SOA MINIMUM) of the authority SOA (RFC 2308 §5); without an SOA a
    /// negative reply is not cached (RFC 2308 §5). TTLs with the top bit set count as 0
    /// (RFC 2181 §8).
    public var cacheTTL: UInt32? {
        func sane(_ ttl: UInt32) -> UInt32 { ttl & 0x8000_0000 != 0 ? 0 : ttl }
        if !answers.isEmpty {
            return answers.map { sane($0.ttl) }.min()
        }
        guard rcode == .noError || rcode == .nameError else { return nil }
        for record in authorities {
            if case .soa(let soa) = record.rdata { return min(sane(record.ttl), sane(soa.minimum)) }
        }
        return nil
    }
}
