/// The OPT record of a query, as the server needs it (RFC 6891 §6.1.2, §6.1.3).
public struct EDNSQueryInfo: Hashable, Sendable {
    public var udpPayloadSize: UInt16
    public var version: UInt8
    public var dnssecOK: Bool
    public init(udpPayloadSize: UInt16, version: UInt8, dnssecOK: Bool) {
        self.udpPayloadSize = udpPayloadSize
        self.version = version
        self.dnssecOK = dnssecOK
    }
}

/// The query fast path: the one question and the OPT record, read without building a
/// `DNSMessage`. Keep one per event loop and call `parse` for each packet; the name buffers keep
/// their capacity, so a parse does not allocate once warm.
///
/// Framing of every section is checked with the full parser's limits (RFC 9267); the RDATA of
/// records other than OPT is skipped, not decoded, since a query's answer and authority sections
/// carry nothing the server uses.
public struct DNSQuery: Sendable {
    /// ID, opcode and flags as received.
    public private(set) var header: DNSHeader
    /// The question name as received (case kept for echoing, RFC 1035 §7.3; 0x20 randomisation),
    /// uncompressed wire form.
    public private(set) var name: [UInt8]
    /// The question name lowercased (RFC 4343 §3), uncompressed wire form: the lookup key.
    public private(set) var lowercasedName: [UInt8]
    public private(set) var type: DNSType
    public private(set) var `class`: DNSClass
    /// The first OPT record, if any.
    public private(set) var edns: EDNSQueryInfo?
    /// How many OPT records the additional section holds; more than one is FORMERR (RFC 6891 §6.1.1).
    public private(set) var optCount: Int
    /// Offset just past the question in the packet.
    public private(set) var questionEnd: Int

    public init() {
        header = DNSHeader()
        name = []
        name.reserveCapacity(256)
        lowercasedName = []
        lowercasedName.reserveCapacity(256)
        type = DNSType(0)
        self.class = DNSClass(0)
        edns = nil
        optCount = 0
        questionEnd = 0
    }

    /// The question as a value, for logs and tests; allocates.
    public var question: DNSQuestion {
        DNSQuestion(name: DNSName(validatedWire: name), type: type, class: self.class)
    }

    /// The largest UDP reply this client accepts: 512 octets without EDNS (RFC 1035 §4.2.1), else
    /// its advertised size, at least 512 (RFC 6891 §6.2.5) and at most `serverMaximum`
    /// (1232 by default, the DNS Flag Day 2020 figure that avoids IP fragmentation).
    public func udpReplyLimit(serverMaximum: Int = 1232) -> Int {
        guard let edns else { return 512 }
        return min(max(Int(edns.udpPayloadSize), 512), max(serverMaximum, 512))
    }

    /// Reads the header, the single question and the OPT record of `packet`. Call after the gate
    /// said `.proceed`; a QDCOUNT other than 1 throws `questionCount`.
    public mutating func parse(_ packet: UnsafeRawBufferPointer) throws(DNSWireError) {
        guard packet.count >= 12 else { throw .truncatedHeader(length: packet.count) }
        // The 12 header octets are known to be there: read them without a check per field.
        let id = packet.headerWord(0)
        header = DNSHeader(id: id, flags: packet.headerWord(2))
        let qdcount = Int(packet.headerWord(4))
        let ancount = Int(packet.headerWord(6))
        let nscount = Int(packet.headerWord(8))
        let arcount = Int(packet.headerWord(10))
        var reader = WireReader(packet, offset: 12)
        guard qdcount == 1 else { throw .questionCount(qdcount) }
        try DNSMessage.checkCounts(question: 1, records: ancount + nscount + arcount, reader: reader)

        name.removeAll(keepingCapacity: true)
        try reader.name(into: &name)
        lowercasedName.replaceSubrange(0..<lowercasedName.count, with: name)
        lowercasedName.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices { buffer[index] = DNSName.asciiLower(buffer[index]) }
        }
        type = DNSType(try reader.u16())
        self.class = DNSClass(try reader.u16())
        questionEnd = reader.offset

        edns = nil
        optCount = 0
        for index in 0..<(ancount + nscount + arcount) {
            let start = reader.offset
            // Root by length, not by first octet: a pointer to a root label is the root too.
            let ownerIsRoot = try reader.skipName() == 1
            let type = DNSType(try reader.u16())
            let classField = try reader.u16()
            let ttl = try reader.u32()
            let rdlengthOffset = reader.offset
            let rdlength = Int(try reader.u16())
            guard rdlength <= reader.remaining else {
                throw .rdataPastEnd(offset: rdlengthOffset, rdlength: rdlength, available: reader.remaining)
            }
            let end = reader.offset + rdlength
            if type == .opt {
                guard index >= ancount + nscount else { throw .optOutsideAdditional(offset: start) }
                guard ownerIsRoot else { throw .optOwnerNotRoot(offset: start) }
                // Option framing is checked so a query the full parser rejects is rejected here too.
                var position = reader.offset
                while position < end {
                    guard end - position >= 4 else { throw .malformedOption(offset: position) }
                    let length = Int(packet[position + 2]) << 8 | Int(packet[position + 3])
                    guard length <= end - position - 4 else { throw .malformedOption(offset: position) }
                    position += 4 + length
                }
                optCount += 1
                if edns == nil {
                    edns = EDNSQueryInfo(
                        udpPayloadSize: classField, version: UInt8(ttl >> 16 & 0xFF), dnssecOK: ttl & 0x8000 != 0)
                }
            }
            reader.offset = end
        }
    }

    public mutating func parse(_ packet: [UInt8]) throws(DNSWireError) {
        let result = packet.withUnsafeBytes { buffer in
            Result { () throws(DNSWireError) in try self.parse(buffer) }
        }
        try result.get()
    }
}

/// A compact cache key: lowercased wire name, type and class (RFC 4343 §3). Creating one copies
/// the name, so build it only when a cache is consulted.
public struct DNSQuestionKey: Hashable, Sendable {
    public var name: [UInt8]
    public var type: DNSType
    public var `class`: DNSClass

    public init(name lowercasedWire: [UInt8], type: DNSType, class: DNSClass) {
        self.name = lowercasedWire
        self.type = type
        self.class = `class`
    }

    public init(_ query: DNSQuery) {
        self.init(name: query.lowercasedName, type: query.type, class: query.class)
    }

    public init(_ question: DNSQuestion) {
        self.init(name: question.name.lowercased.wireBytes, type: question.type, class: question.class)
    }
}

extension UnsafeRawBufferPointer {
    /// A big-endian 16-bit word of the header; callers have checked `count >= 12`.
    @inline(__always) func headerWord(_ offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }
}
