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
        let base = count
        try write(message, records: .all, truncated: message.header.truncated, options: true)
        guard count - base <= 65535 else { throw .messageTooLarge(size: count - base) }
    }

    /// Appends `message` fitted into `limit` octets; see `DNSMessage.serialize(truncatingTo:)`.
    public mutating func write(_ message: DNSMessage, truncatingTo limit: Int) throws(DNSWireError) {
        let base = count
        let limit = min(limit, 65535)
        try write(message, records: .all, truncated: message.header.truncated, options: true)
        if count - base <= limit { return }
        truncate(to: base)
        try write(message, records: .withoutAdditional, truncated: message.header.truncated, options: true)
        if count - base <= limit { return }
        truncate(to: base)
        try write(message, records: .none, truncated: true, options: true)
        if count - base <= limit { return }
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
        fields(12) { field in
            field.u16(header.id)
            field.u16(header.flags(rcodeBits: message.rcode.headerBits))
            field.u16(UInt16(message.questions.count))
            field.u16(UInt16(answers.count))
            field.u16(UInt16(authorities.count))
            field.u16(UInt16(additionalCount))
        }
        for question in message.questions {
            name(question.name)
            fields(4) { field in
                field.u16(question.type.rawValue)
                field.u16(question.class.rawValue)
            }
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
        let lengthOffset = count + 8
        fields(10) { field in
            field.u16(record.type.rawValue)
            field.u16(record.class.rawValue)
            field.u32(record.ttl)
            field.u16(0)
        }
        let kind = DNSRData.kind(type: record.type, class: record.class)
        switch (record.rdata, kind) {
        case (.a(let address), .a):
            u32(address.rawValue)
        case (.aaaa(let address), .aaaa):
            fields(16) { field in
                field.u32(UInt32(truncatingIfNeeded: address.high >> 32))
                field.u32(UInt32(truncatingIfNeeded: address.high))
                field.u32(UInt32(truncatingIfNeeded: address.low >> 32))
                field.u32(UInt32(truncatingIfNeeded: address.low))
            }
        case (.cname(let target), .cname), (.ns(let target), .ns), (.ptr(let target), .ptr):
            name(target)
        case (.mx(let preference, let exchange), .mx):
            u16(preference)
            name(exchange)
        case (.soa(let soa), .soa):
            name(soa.primaryNameServer)
            name(soa.responsibleMailbox)
            fields(20) { field in
                field.u32(soa.serial)
                field.u32(soa.refresh)
                field.u32(soa.retry)
                field.u32(soa.expire)
                field.u32(soa.minimum)
            }
        case (.txt(let strings), .txt):
            for string in strings {
                guard string.count <= 255 else { throw .rdataTooLarge(type: record.type) }
                u8(UInt8(string.count))
                append(string)
            }
        case (.unknown(let data), .opaque):
            append(data)
        default:
            throw .rdataMismatch(type: record.type)
        }
        let length = count - lengthOffset - 2
        guard length <= 65535 else { throw .rdataTooLarge(type: record.type) }
        patchU16(UInt16(length), at: lengthOffset)
    }

    /// Appends the OPT pseudo-record (RFC 6891 §6.1.2, §6.1.3).
    /// `extendedErrors` are written as further options after `edns.options` (RFC 8914 §2), which
    /// saves building a new options array per reply.
    public mutating func write(
        _ edns: EDNS, extendedRcode: UInt8, options: Bool = true, extendedErrors: [ExtendedDNSError] = []
    ) throws(DNSWireError) {
        let lengthOffset = count + 9
        fields(11) { field in
            field.u8(0)
            field.u16(DNSType.opt.rawValue)
            field.u16(edns.udpPayloadSize)
            field.u8(extendedRcode)
            field.u8(edns.version)
            field.u16((edns.dnssecOK ? 0x8000 : 0) | edns.zeroFlags & 0x7FFF)
            field.u16(0)
        }
        if options {
            for option in edns.options {
                guard option.data.count <= 65535 else { throw .rdataTooLarge(type: .opt) }
                u16(option.code.rawValue)
                u16(UInt16(option.data.count))
                append(option.data)
            }
            for error in extendedErrors {
                let textLength = error.extraText.utf8.count
                guard textLength <= 65533 else { throw .rdataTooLarge(type: .opt) }
                fields(6) { field in
                    field.u16(EDNSOptionCode.extendedDNSError.rawValue)
                    field.u16(UInt16(2 + textLength))
                    field.u16(error.infoCode.rawValue)
                }
                append(contentsOf: error.extraText.utf8)
            }
        }
        let length = count - lengthOffset - 2
        guard length <= 65535 else { throw .rdataTooLarge(type: .opt) }
        patchU16(UInt16(length), at: lengthOffset)
    }
}
