/// The header flags of RFC 1035 §4.1.1, plus AD and CD (RFC 4035 §3.2). Counts are not stored:
/// they follow from the sections when a message is written.
public struct DNSHeader: Hashable, Sendable {
    public var id: UInt16
    /// QR: set in responses.
    public var isResponse: Bool
    public var opcode: DNSOpcode
    /// AA
    public var authoritative: Bool
    /// TC (RFC 1035 §4.2.1): the reply did not fit; the client should retry over TCP.
    public var truncated: Bool
    /// RD
    public var recursionDesired: Bool
    /// RA
    public var recursionAvailable: Bool
    /// Z, the one reserved bit (bit 9); kept so a message round-trips bit for bit.
    public var zero: Bool
    /// AD (RFC 4035 §3.2.3)
    public var authenticData: Bool
    /// CD (RFC 4035 §3.2.2)
    public var checkingDisabled: Bool

    public init(
        id: UInt16 = 0, isResponse: Bool = false, opcode: DNSOpcode = .query, authoritative: Bool = false,
        truncated: Bool = false, recursionDesired: Bool = false, recursionAvailable: Bool = false,
        zero: Bool = false, authenticData: Bool = false, checkingDisabled: Bool = false
    ) {
        self.id = id
        self.isResponse = isResponse
        self.opcode = opcode
        self.authoritative = authoritative
        self.truncated = truncated
        self.recursionDesired = recursionDesired
        self.recursionAvailable = recursionAvailable
        self.zero = zero
        self.authenticData = authenticData
        self.checkingDisabled = checkingDisabled
    }

    /// Decodes the second 16-bit word of the header, ignoring its RCODE bits.
    @inlinable public init(id: UInt16, flags: UInt16) {
        self.init(
            id: id, isResponse: flags & 0x8000 != 0, opcode: DNSOpcode(UInt8(flags >> 11 & 0x0F)),
            authoritative: flags & 0x0400 != 0, truncated: flags & 0x0200 != 0,
            recursionDesired: flags & 0x0100 != 0, recursionAvailable: flags & 0x0080 != 0,
            zero: flags & 0x0040 != 0, authenticData: flags & 0x0020 != 0,
            checkingDisabled: flags & 0x0010 != 0)
    }

    /// The second 16-bit word with the given header RCODE bits.
    @inlinable public func flags(rcodeBits: UInt8) -> UInt16 {
        var value = UInt16(opcode.rawValue) << 11 | UInt16(rcodeBits & 0x0F)
        if isResponse { value |= 0x8000 }
        if authoritative { value |= 0x0400 }
        if truncated { value |= 0x0200 }
        if recursionDesired { value |= 0x0100 }
        if recursionAvailable { value |= 0x0080 }
        if zero { value |= 0x0040 }
        if authenticData { value |= 0x0020 }
        if checkingDisabled { value |= 0x0010 }
        return value
    }
}

/// A question entry (RFC 1035 §4.1.2).
public struct DNSQuestion: Hashable, Sendable {
    public var name: DNSName
    public var type: DNSType
    public var `class`: DNSClass
    public init(name: DNSName, type: DNSType, class: DNSClass = .in) {
        self.name = name
        self.type = type
        self.class = `class`
    }
}

/// SOA RDATA (RFC 1035 §3.3.13); a negative answer carries one in the authority section
/// (RFC 2308 §3).
public struct SOAData: Hashable, Sendable {
    public var primaryNameServer: DNSName
    public var responsibleMailbox: DNSName
    public var serial: UInt32
    public var refresh: UInt32
    public var retry: UInt32
    public var expire: UInt32
    /// RFC 2308 §4: the TTL for negative caching is min(SOA TTL, this field).
    public var minimum: UInt32
    public init(
        primaryNameServer: DNSName, responsibleMailbox: DNSName, serial: UInt32, refresh: UInt32,
        retry: UInt32, expire: UInt32, minimum: UInt32
    ) {
        self.primaryNameServer = primaryNameServer
        self.responsibleMailbox = responsibleMailbox
        self.serial = serial
        self.refresh = refresh
        self.retry = retry
        self.expire = expire
        self.minimum = minimum
    }
}

/// RDATA, typed for the types a sinkhole looks into and opaque for every other (RFC 3597 §3).
///
/// A and AAAA are typed only in class IN, since their layout is class-specific (RFC 1035 §3.4);
/// the name-bearing types of RFC 1035 are typed in every class. The case must fit the record's
/// TYPE and CLASS, or writing throws `rdataMismatch`.
public enum DNSRData: Hashable, Sendable {
    case a(IPv4Address)
    case aaaa(IPv6Address)
    case cname(DNSName)
    case ns(DNSName)
    case ptr(DNSName)
    case soa(SOAData)
    case mx(preference: UInt16, exchange: DNSName)
    /// One or more character-strings of up to 255 octets each (RFC 1035 §3.3.14).
    case txt([[UInt8]])
    /// Anything else, kept as the octets received (RFC 3597 §3), for example HTTPS and SVCB.
    case unknown([UInt8])

    /// Which typed case, if any, the parser uses for this TYPE and CLASS.
    @usableFromInline enum Kind { case a, aaaa, cname, ns, ptr, soa, mx, txt, opaque }

    @usableFromInline static func kind(type: DNSType, class: DNSClass) -> Kind {
        switch type.rawValue {
        case 1: `class` == .in ? .a : .opaque
        case 28: `class` == .in ? .aaaa : .opaque
        case 5: .cname
        case 2: .ns
        case 12: .ptr
        case 6: .soa
        case 15: .mx
        case 16: .txt
        default: .opaque
        }
    }
}

/// A resource record (RFC 1035 §4.1.3). OPT is never one of these: it lives in `DNSMessage.edns`.
public struct DNSRecord: Hashable, Sendable {
    public var name: DNSName
    public var type: DNSType
    public var `class`: DNSClass
    /// Seconds, as received; RFC 2181 §8 says values with the top bit set mean zero to a cache.
    public var ttl: UInt32
    public var rdata: DNSRData

    public init(name: DNSName, type: DNSType, class: DNSClass = .in, ttl: UInt32, rdata: DNSRData) {
        self.name = name
        self.type = type
        self.class = `class`
        self.ttl = ttl
        self.rdata = rdata
    }

    /// An A record in class IN.
    public static func a(_ name: DNSName, ttl: UInt32, _ address: IPv4Address) -> DNSRecord {
        DNSRecord(name: name, type: .a, ttl: ttl, rdata: .a(address))
    }

    /// An AAAA record in class IN.
    public static func aaaa(_ name: DNSName, ttl: UInt32, _ address: IPv6Address) -> DNSRecord {
        DNSRecord(name: name, type: .aaaa, ttl: ttl, rdata: .aaaa(address))
    }
}

/// One EDNS option, code and opaque data (RFC 6891 §6.1.2).
public struct EDNSOption: Hashable, Sendable {
    public var code: EDNSOptionCode
    public var data: [UInt8]
    public init(code: EDNSOptionCode, data: [UInt8]) {
        self.code = code
        self.data = data
    }
}

/// The OPT pseudo-record's contents (RFC 6891 §6.1). Its extended RCODE bits are not here: the
/// parser folds them into `DNSMessage.rcode`, and the writer splits them out again.
public struct EDNS: Hashable, Sendable {
    /// Requestor's UDP payload size (RFC 6891 §6.2.3); values below 512 are treated as 512 by users.
    public var udpPayloadSize: UInt16
    /// EDNS version; only 0 is defined, a higher one gets BADVERS (RFC 6891 §6.1.3).
    public var version: UInt8
    /// DO bit: the requester wants DNSSEC records (RFC 3225 §3).
    public var dnssecOK: Bool
    /// The 15 flag bits after DO, reserved; kept so a message round-trips.
    public var zeroFlags: UInt16
    public var options: [EDNSOption]

    public init(
        udpPayloadSize: UInt16 = 1232, version: UInt8 = 0, dnssecOK: Bool = false, zeroFlags: UInt16 = 0,
        options: [EDNSOption] = []
    ) {
        self.udpPayloadSize = udpPayloadSize
        self.version = version
        self.dnssecOK = dnssecOK
        self.zeroFlags = zeroFlags & 0x7FFF
        self.options = options
    }

    /// The Extended DNS Errors among the options (RFC 8914 §2); malformed ones are skipped.
    public var extendedErrors: [ExtendedDNSError] {
        options.compactMap { $0.code == .extendedDNSError ? ExtendedDNSError(optionData: $0.data) : nil }
    }
}

/// Extended DNS Error (RFC 8914 §2): an INFO-CODE and optional UTF-8 EXTRA-TEXT.
public struct ExtendedDNSError: Hashable, Sendable {
    public var infoCode: EDEInfoCode
    /// RFC 8914 §2: UTF-8, not NUL-terminated, may be empty.
    public var extraText: String

    public init(infoCode: EDEInfoCode, extraText: String = "") {
        self.infoCode = infoCode
        self.extraText = extraText
    }

    /// Decodes option data; nil when shorter than the two octets of INFO-CODE. Invalid UTF-8 in
    /// the text is repaired rather than rejected, since the text is only for humans (RFC 8914 §2).
    public init?(optionData data: [UInt8]) {
        guard data.count >= 2 else { return nil }
        infoCode = EDEInfoCode(UInt16(data[0]) << 8 | UInt16(data[1]))
        var text = data[2...]
        // Some senders add a NUL terminator despite §2; dropping it keeps logs clean.
        if text.last == 0 { text = text.dropLast() }
        extraText = String(decoding: text, as: UTF8.self)
    }

    public var optionData: [UInt8] {
        [UInt8(infoCode.rawValue >> 8), UInt8(infoCode.rawValue & 0xFF)] + Array(extraText.utf8)
    }

    public var option: EDNSOption { EDNSOption(code: .extendedDNSError, data: optionData) }
}

/// A whole DNS message (RFC 1035 §4.1). Parse with `init(parsing:)`, write with `serialize()`.
public struct DNSMessage: Hashable, Sendable {
    public var header: DNSHeader
    /// Full twelve-bit RCODE: the header's four bits plus the OPT record's eight (RFC 6891 §6.1.3).
    public var rcode: DNSRcode
    public var questions: [DNSQuestion]
    public var answers: [DNSRecord]
    public var authorities: [DNSRecord]
    /// Additional records other than OPT.
    public var additionals: [DNSRecord]
    /// The OPT record, when present (RFC 6891 §6.1.1); it is written last in the additional section.
    public var edns: EDNS?

    public init(
        header: DNSHeader, rcode: DNSRcode = .noError, questions: [DNSQuestion] = [], answers: [DNSRecord] = [],
        authorities: [DNSRecord] = [], additionals: [DNSRecord] = [], edns: EDNS? = nil
    ) {
        self.header = header
        self.rcode = rcode
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
        self.edns = edns
    }
}
