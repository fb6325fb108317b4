/// Why a byte string is not an acceptable DNS message, or why a message cannot be written.
///
/// Every case carries the byte `offset` where the problem was found, so a log line can point at the
/// exact octet of a captured packet. The server answers FORMERR for any parse error (RFC 1035 §4.1.1);
/// the case is for logs and tests, never sent to a client.
public enum DNSWireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer than the 12 header octets (RFC 1035 §4.1.1).
    case truncatedHeader(length: Int)
    /// A field needs `needed` octets at `offset` but the message ends first.
    case unexpectedEnd(offset: Int, needed: Int)
    /// The section counts promise more entries than the remaining octets could hold, even at the
    /// minimum size of 5 octets per question and 11 per record (RFC 9267 §2, "count checks").
    case countsExceedData(offset: Int, minimumNeeded: Int, available: Int)
    /// A name longer than 255 octets in wire form (RFC 1035 §2.3.4, RFC 9267 §2.1).
    case nameTooLong(offset: Int)
    /// Label type 0b01 (extended, RFC 6891 §5) or 0b10 (reserved): neither is in use (RFC 9267 §2).
    case unsupportedLabelType(offset: Int, byte: UInt8)
    /// A compression pointer that does not point strictly backward (RFC 9267 §2).
    case pointerNotBackward(offset: Int, target: Int)
    /// A compression pointer into the 12-octet header, where no name can start (RFC 1035 §4.1.1).
    case pointerIntoHeader(offset: Int, target: Int)
    /// A compression pointer that reads the TTL field at `ttlOffset` as name octets, so the
    /// reply cannot have its TTLs rewritten in place (`DNSMessageLayout`); re-serialize it instead.
    case pointerReadsTTL(ttlOffset: Int)
    /// More than 126 compression pointers in one name (RFC 9267 §2: at most 126 can be useful).
    case tooManyPointers(offset: Int)
    /// RDLENGTH larger than the octets left in the message (RFC 1035 §3.2.1, RFC 9267 §4).
    case rdataPastEnd(offset: Int, rdlength: Int, available: Int)
    /// The RDATA of a known type does not have the shape its type requires (RFC 1035 §3.3).
    case malformedRDATA(offset: Int, type: DNSType)
    /// An EDNS option runs past the end of the OPT RDATA (RFC 6891 §6.1.2).
    case malformedOption(offset: Int)
    /// An OPT record whose owner is not the root name (RFC 6891 §6.1.2).
    case optOwnerNotRoot(offset: Int)
    /// An OPT record in the answer or authority section (RFC 6891 §6.1.1: additional only).
    case optOutsideAdditional(offset: Int)
    /// A second OPT record (RFC 6891 §6.1.1: FORMERR).
    case multipleOPT(offset: Int)

    /// Octets after the root label where only one name was expected.
    case trailingOctets(offset: Int)

    /// The query fast path needs exactly one question (RFC 9619 §4); the gate answers FORMERR first.
    case questionCount(Int)

    // Writing.
    /// A presentation-form name that cannot be a DNS name (RFC 1035 §5.1 escapes, §2.3.4 limits).
    case invalidPresentation(name: String, reason: String)
    /// The message would be larger than 65535 octets, the most a length field can describe.
    case messageTooLarge(size: Int)
    /// A section would hold more than 65535 entries.
    case tooManyEntries(section: String)
    /// RDATA larger than 65535 octets, or a TXT string longer than 255.
    case rdataTooLarge(type: DNSType)
    /// The RDATA value does not belong to the record's TYPE and CLASS; fix the record.
    case rdataMismatch(type: DNSType)
    /// An RCODE above 15 needs an OPT record to carry its upper bits (RFC 6891 §6.1.3).
    case extendedRcodeWithoutEDNS(rcode: DNSRcode)
    /// Records were appended to a section after a later section was started.
    case sectionOutOfOrder

    public var description: String {
        switch self {
        case .truncatedHeader(let length):
            "DNS message of \(length) octets is shorter than the 12-octet header"
        case .unexpectedEnd(let offset, let needed):
            "DNS message ends at offset \(offset) where \(needed) more octets were expected"
        case .countsExceedData(let offset, let needed, let available):
            "DNS section counts need at least \(needed) octets but only \(available) remain after offset \(offset)"
        case .nameTooLong(let offset):
            "DNS name starting at offset \(offset) is longer than 255 octets"
        case .unsupportedLabelType(let offset, let byte):
            "DNS label type at offset \(offset) (first octet 0x\(String(byte, radix: 16))) is not a length or a pointer"
        case .pointerNotBackward(let offset, let target):
            "DNS compression pointer at offset \(offset) points to \(target), not strictly backward"
        case .pointerIntoHeader(let offset, let target):
            "DNS compression pointer at offset \(offset) points into the header (offset \(target))"
        case .pointerReadsTTL(let ttlOffset):
            "a DNS compression pointer reads the TTL field at offset \(ttlOffset) as a name; re-serialize this reply instead of patching it"
        case .tooManyPointers(let offset):
            "DNS name starting at offset \(offset) follows more than 126 compression pointers"
        case .rdataPastEnd(let offset, let rdlength, let available):
            "DNS RDLENGTH \(rdlength) at offset \(offset) exceeds the \(available) octets left"
        case .malformedRDATA(let offset, let type):
            "DNS \(type) RDATA at offset \(offset) does not match the layout of its type"
        case .malformedOption(let offset):
            "EDNS option at offset \(offset) runs past the end of the OPT record"
        case .optOwnerNotRoot(let offset):
            "OPT record at offset \(offset) has an owner name other than the root"
        case .optOutsideAdditional(let offset):
            "OPT record at offset \(offset) is outside the additional section"
        case .multipleOPT(let offset):
            "second OPT record at offset \(offset); a message may carry only one"
        case .trailingOctets(let offset):
            "unexpected octets after the end of the name at offset \(offset)"
        case .questionCount(let count):
            "DNS query has \(count) questions; exactly one is allowed"
        case .invalidPresentation(let name, let reason):
            "\"\(name)\" is not a valid DNS name: \(reason)"
        case .messageTooLarge(let size):
            "DNS message of \(size) octets exceeds 65535; split the answer or send fewer records"
        case .tooManyEntries(let section):
            "DNS \(section) section has more than 65535 entries"
        case .rdataTooLarge(let type):
            "\(type) RDATA exceeds its length limit (65535 octets, 255 per TXT string)"
        case .rdataMismatch(let type):
            "RDATA value does not belong to a \(type) record; use .unknown for opaque data"
        case .extendedRcodeWithoutEDNS(let rcode):
            "RCODE \(rcode) needs EDNS; add an OPT record or use an RCODE below 16"
        case .sectionOutOfOrder:
            "records must be appended answer, then authority, then additional"
        }
    }
}
