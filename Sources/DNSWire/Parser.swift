extension DNSMessage {
    /// Parses a whole message (RFC 1035 §4.1). Total: any input gives a message or a
    /// `DNSWireError` naming the failure and its offset (RFC 9267). Octets after the last record
    /// are ignored, as most resolvers do, since some middleboxes pad UDP payloads.
    public init(parsing bytes: [UInt8]) throws(DNSWireError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DNSWireError) in try DNSMessage(parsing: buffer) }
        }
        self = try result.get()
    }

    /// Parses a whole message from raw memory; see `init(parsing:)`.
    public init(parsing buffer: UnsafeRawBufferPointer) throws(DNSWireError) {
        guard buffer.count >= 12 else { throw .truncatedHeader(length: buffer.count) }
        var reader = WireReader(buffer)
        let id = try reader.u16()
        let flags = try reader.u16()
        let qdcount = Int(try reader.u16())
        let ancount = Int(try reader.u16())
        let nscount = Int(try reader.u16())
        let arcount = Int(try reader.u16())
        try Self.checkCounts(question: qdcount, records: ancount + nscount + arcount, reader: reader)

        var questions: [DNSQuestion] = []
        questions.reserveCapacity(qdcount)
        for _ in 0..<qdcount {
            var wire: [UInt8] = []
            try reader.name(into: &wire)
            let type = DNSType(try reader.u16())
            let klass = DNSClass(try reader.u16())
            questions.append(DNSQuestion(name: DNSName(validatedWire: wire), type: type, class: klass))
        }

        var edns: EDNS?
        var extendedRcode: UInt8 = 0
        func section(_ count: Int, isAdditional: Bool) throws(DNSWireError) -> [DNSRecord] {
            var records: [DNSRecord] = []
            records.reserveCapacity(count)
            for _ in 0..<count {
                let start = reader.offset
                switch try Self.readRecord(&reader) {
                case .record(let record):
                    records.append(record)
                case .opt(let found, let rcodeBits):
                    guard isAdditional else { throw .optOutsideAdditional(offset: start) }
                    guard edns == nil else { throw .multipleOPT(offset: start) }
                    edns = found
                    extendedRcode = rcodeBits
                }
            }
            return records
        }
        let answers = try section(ancount, isAdditional: false)
        let authorities = try section(nscount, isAdditional: false)
        let additionals = try section(arcount, isAdditional: true)
        self.init(
            header: DNSHeader(id: id, flags: flags),
            rcode: DNSRcode(UInt16(extendedRcode) << 4 | flags & 0x0F),
            questions: questions, answers: answers, authorities: authorities, additionals: additionals,
            edns: edns)
    }

    /// RFC 9267 §2: reject impossible counts before allocating anything for them. A question is at
    /// least 5 octets (root name, type, class), a record at least 11.
    @inlinable
    static func checkCounts(question: Int, records: Int, reader: WireReader) throws(DNSWireError) {
        let needed = question * 5 + records * 11
        guard needed <= reader.remaining else {
            throw .countsExceedData(offset: reader.offset, minimumNeeded: needed, available: reader.remaining)
        }
    }

    enum ParsedRecord {
        case record(DNSRecord)
        case opt(EDNS, extendedRcode: UInt8)
    }

    static func readRecord(_ reader: inout WireReader) throws(DNSWireError) -> ParsedRecord {
        let start = reader.offset
        var ownerWire: [UInt8] = []
        try reader.name(into: &ownerWire)
        let type = DNSType(try reader.u16())
        let klass = DNSClass(try reader.u16())
        let ttl = try reader.u32()
        let rdlengthOffset = reader.offset
        let rdlength = Int(try reader.u16())
        guard rdlength <= reader.remaining else {
            throw .rdataPastEnd(offset: rdlengthOffset, rdlength: rdlength, available: reader.remaining)
        }
        let rdataEnd = reader.offset + rdlength
        if type == .opt {
            guard ownerWire == [0] else { throw .optOwnerNotRoot(offset: start) }
            var options: [EDNSOption] = []
            while reader.offset < rdataEnd {
                let optionStart = reader.offset
                guard rdataEnd - reader.offset >= 4 else { throw .malformedOption(offset: optionStart) }
                let code = EDNSOptionCode(try reader.u16())
                let length = Int(try reader.u16())
                guard length <= rdataEnd - reader.offset else { throw .malformedOption(offset: optionStart) }
                options.append(EDNSOption(code: code, data: try reader.bytes(length)))
            }
            let edns = EDNS(
                udpPayloadSize: klass.rawValue, version: UInt8(ttl >> 16 & 0xFF),
                dnssecOK: ttl & 0x8000 != 0, zeroFlags: UInt16(ttl & 0x7FFF), options: options)
            return .opt(edns, extendedRcode: UInt8(ttl >> 24))
        }
        let rdata = try readRData(&reader, type: type, class: klass, end: rdataEnd)
        return .record(DNSRecord(name: DNSName(validatedWire: ownerWire), type: type, class: klass, ttl: ttl, rdata: rdata))
    }

    /// Decodes RDATA of `[reader.offset, end)`. Names inside may point anywhere earlier in the
    /// message (RFC 3597 §4 allows compression only in the RFC 1035 types typed here), but must
    /// end inside the RDATA, and the typed fields must use up RDLENGTH exactly.
    static func readRData(
        _ reader: inout WireReader, type: DNSType, class klass: DNSClass, end: Int
    ) throws(DNSWireError) -> DNSRData {
        let start = reader.offset
        let length = end - start
        func name() throws(DNSWireError) -> DNSName {
            var wire: [UInt8] = []
            try reader.name(into: &wire)
            guard reader.offset <= end else { throw .malformedRDATA(offset: start, type: type) }
            return DNSName(validatedWire: wire)
        }
        func u32() throws(DNSWireError) -> UInt32 {
            guard end - reader.offset >= 4 else { throw .malformedRDATA(offset: start, type: type) }
            return try reader.u32()
        }
        let rdata: DNSRData
        switch DNSRData.kind(type: type, class: klass) {
        case .a:
            guard length == 4 else { throw .malformedRDATA(offset: start, type: type) }
            rdata = .a(IPv4Address(rawValue: try reader.u32()))
        case .aaaa:
            guard length == 16 else { throw .malformedRDATA(offset: start, type: type) }
            let high = UInt64(try reader.u32()) << 32 | UInt64(try reader.u32())
            let low = UInt64(try reader.u32()) << 32 | UInt64(try reader.u32())
            rdata = .aaaa(IPv6Address(high: high, low: low))
        case .cname: rdata = .cname(try name())
        case .ns: rdata = .ns(try name())
        case .ptr: rdata = .ptr(try name())
        case .mx:
            guard length >= 3 else { throw .malformedRDATA(offset: start, type: type) }
            let preference = try reader.u16()
            rdata = .mx(preference: preference, exchange: try name())
        case .soa:
            let primary = try name()
            let mailbox = try name()
            rdata = .soa(SOAData(
                primaryNameServer: primary, responsibleMailbox: mailbox, serial: try u32(),
                refresh: try u32(), retry: try u32(), expire: try u32(), minimum: try u32()))
        case .txt:
            var strings: [[UInt8]] = []
            while reader.offset < end {
                let count = Int(try reader.u8())
                guard count <= end - reader.offset else { throw .malformedRDATA(offset: start, type: type) }
                strings.append(try reader.bytes(count))
            }
            rdata = .txt(strings)
        case .opaque:
            rdata = .unknown(try reader.bytes(length))
        }
        guard reader.offset == end else { throw .malformedRDATA(offset: start, type: type) }
        return rdata
    }
}
