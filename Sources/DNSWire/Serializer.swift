extension DNSMessage {
    /// Writes the message in wire form with name compression (RFC 1035 §4.1.4). Parsing the result
    /// gives back a message equal to this one (names compare without case), which the fuzz target
    /// checks. Throws when the message cannot be expressed on the wire.
    public func serialize() throws(DNSWireError) -> [UInt8] {
        var writer = DNSWriter()
        try writer.write(self)
        return writer.bytes
    }

    /// Writes the message so it fits in `limit` octets, as a UDP reply must (RFC 1035 §4.2.1,
    /// RFC 6891 §7). If the whole message is too large, the additional records are dropped first
    /// (RFC 2181 §9: that needs no TC); if still too large, every record is dropped and TC is set,
    /// keeping the question and the OPT record so the client learns our size and retries over TCP.
    public func serialize(truncatingTo limit: Int) throws(DNSWireError) -> [UInt8] {
        var writer = DNSWriter()
        try writer.write(self, truncatingTo: limit)
        return writer.bytes
    }
}

extension DNSWriter {
    /// Appends `message` to the (normally empty) buffer; see `DNSMessage.serialize()`.
    public mutating func write(_ message: DNSMessage) throws(DNSWireError) {
        let base = bytes.count
        try write(message, records: .all, truncated: message.header.truncated, options: true)
        guard bytes.count - base <= 65535 else { throw .messageTooLarge(size: bytes.count - base) }
    }

    /// Appends `message` fitted into `limit` octets; see `DNSMessage.serialize(truncatingTo:)`.
    public mutating func write(_ message: DNSMessage, truncatingTo limit: Int) throws(DNSWireError) {
        let base = bytes.count
        let limit = min(limit, 65535)
        try write(message, records: .all, truncated: message.header.truncated, options: true)
        if bytes.count - base <= limit { return }
        truncate(to: base)
        try write(message, records: .withoutAdditional, truncated: message.header.truncated, options: true)
        if bytes.count - base <= limit { return }
        truncate(to: base)
        try write(message, records: .none, truncated: true, options: true)
        if bytes.count - base <= limit { return }
        // Options (an EDE text, say) are the last thing worth dropping before the OPT itself.
        truncate(to: base)
        try write(message, records: .none, truncated: true, options: false)
    }

    enum RecordSelection { case all, withoutAdditional, none }

    private mutating func write(
        _ message: DNSMessage, records: RecordSelection, truncated: Bool, options: Bool
    ) throws(DNSWireError) {
        guard message.rcode.rawValue <= 15 || message.edns != nil else {
            throw .extendedRcodeWithoutEDNS(rcode: message.rcode)
        }
        var header = message.header
        header.truncated = truncated
        let answers = records == .none ? [] : message.answers
        let authorities = records == .none ? [] : message.authorities
        let additionals = records == .all ? message.additionals : []
        let additionalCount = additionals.count + (message.edns == nil ? 0 : 1)
        for (count, section) in [
            (message.questions.count, "question"), (answers.count, "answer"),
            (authorities.count, "authority"), (additionalCount, "additional"),
        ] where count > 65535 {
            throw .tooManyEntries(section: section)
        }
        u16(header.id)
        u16(header.flags(rcodeBits: message.rcode.headerBits))
        u16(UInt16(message.questions.count))
        u16(UInt16(answers.count))
        u16(UInt16(authorities.count))
        u16(UInt16(additionalCount))
        for question in message.questions {
            name(question.name)
            u16(question.type.rawValue)
            u16(question.class.rawValue)
        }
        for record in answers { try write(record) }
        for record in authorities { try write(record) }
        for record in additionals { try write(record) }
        if let edns = message.edns {
            try write(edns, extendedRcode: message.rcode.extendedBits, options: options)
        }
    }

    /// Appends one resource record (RFC 1035 §4.1.3), compressing its owner and, for the
    /// RFC 1035 types, the names in its RDATA (RFC 3597 §4).
    public mutating func write(_ record: DNSRecord) throws(DNSWireError) {
        name(record.name)
        u16(record.type.rawValue)
        u16(record.class.rawValue)
        u32(record.ttl)
        let lengthOffset = bytes.count
        u16(0)
        let kind = DNSRData.kind(type: record.type, class: record.class)
        switch (record.rdata, kind) {
        case (.a(let address), .a):
            u32(address.rawValue)
        case (.aaaa(let address), .aaaa):
            u32(UInt32(truncatingIfNeeded: address.high >> 32))
            u32(UInt32(truncatingIfNeeded: address.high))
            u32(UInt32(truncatingIfNeeded: address.low >> 32))
            u32(UInt32(truncatingIfNeeded: address.low))
        case (.cname(let target), .cname), (.ns(let target), .ns), (.ptr(let target), .ptr):
            name(target)
        case (.mx(let preference, let exchange), .mx):
            u16(preference)
            name(exchange)
        case (.soa(let soa), .soa):
            name(soa.primaryNameServer)
            name(soa.responsibleMailbox)
            u32(soa.serial)
            u32(soa.refresh)
            u32(soa.retry)
            u32(soa.expire)
            u32(soa.minimum)
        case (.txt(let strings), .txt):
            for string in strings {
                guard string.count <= 255 else { throw .rdataTooLarge(type: record.type) }
                u8(UInt8(string.count))
                append(contentsOf: string)
            }
        case (.unknown(let data), .opaque):
            append(contentsOf: data)
        default:
            throw .rdataMismatch(type: record.type)
        }
        let length = bytes.count - lengthOffset - 2
        guard length <= 65535 else { throw .rdataTooLarge(type: record.type) }
        patchU16(UInt16(length), at: lengthOffset)
    }

    /// Appends the OPT pseudo-record (RFC 6891 §6.1.2, §6.1.3).
    /// `extendedErrors` are written as further options after `edns.options` (RFC 8914 §2), which
    /// saves building a new options array per reply.
    public mutating func write(
        _ edns: EDNS, extendedRcode: UInt8, options: Bool = true, extendedErrors: [ExtendedDNSError] = []
    ) throws(DNSWireError) {
        u8(0)
        u16(DNSType.opt.rawValue)
        u16(edns.udpPayloadSize)
        u8(extendedRcode)
        u8(edns.version)
        u16((edns.dnssecOK ? 0x8000 : 0) | edns.zeroFlags & 0x7FFF)
        let lengthOffset = bytes.count
        u16(0)
        if options {
            for option in edns.options {
                guard option.data.count <= 65535 else { throw .rdataTooLarge(type: .opt) }
                u16(option.code.rawValue)
                u16(UInt16(option.data.count))
                append(contentsOf: option.data)
            }
            for error in extendedErrors {
                let textLength = error.extraText.utf8.count
                guard textLength <= 65533 else { throw .rdataTooLarge(type: .opt) }
                u16(EDNSOptionCode.extendedDNSError.rawValue)
                u16(UInt16(2 + textLength))
                u16(error.infoCode.rawValue)
                append(contentsOf: error.extraText.utf8)
            }
        }
        let length = bytes.count - lengthOffset - 2
        guard length <= 65535 else { throw .rdataTooLarge(type: .opt) }
        patchU16(UInt16(length), at: lengthOffset)
    }
}
