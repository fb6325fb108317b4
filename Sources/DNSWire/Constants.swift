// Open code points of the DNS protocol. Each is a struct around its raw value, not a closed enum,
// so that a value this module has never heard of still parses, compares and round-trips (RFC 3597).

/// A resource record TYPE (RFC 1035 §3.2.2, IANA "Resource Record (RR) TYPEs").
public struct DNSType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let a = DNSType(1)
    public static let ns = DNSType(2)
    public static let cname = DNSType(5)
    public static let soa = DNSType(6)
    public static let ptr = DNSType(12)
    public static let mx = DNSType(15)
    public static let txt = DNSType(16)
    public static let aaaa = DNSType(28)
    public static let srv = DNSType(33)
    /// EDNS0 pseudo-record (RFC 6891 §6.1.1).
    public static let opt = DNSType(41)
    public static let ds = DNSType(43)
    public static let rrsig = DNSType(46)
    public static let nsec = DNSType(47)
    public static let dnskey = DNSType(48)
    /// Service binding (RFC 9460 §14.3).
    public static let svcb = DNSType(64)
    /// HTTPS service binding (RFC 9460 §14.3).
    public static let https = DNSType(65)
    /// Query-only type (RFC 1035 §3.2.3, RFC 8482).
    public static let any = DNSType(255)
    public static let caa = DNSType(257)

    private static let names: [(UInt16, String)] = [
        (1, "A"), (2, "NS"), (5, "CNAME"), (6, "SOA"), (12, "PTR"), (15, "MX"), (16, "TXT"),
        (28, "AAAA"), (33, "SRV"), (41, "OPT"), (43, "DS"), (46, "RRSIG"), (47, "NSEC"),
        (48, "DNSKEY"), (64, "SVCB"), (65, "HTTPS"), (255, "ANY"), (257, "CAA"),
    ]

    /// Mnemonic, or `TYPEnnn` for others (RFC 3597 §5).
    public var description: String {
        Self.names.first { $0.0 == rawValue }?.1 ?? "TYPE\(rawValue)"
    }
}

/// A resource record CLASS (RFC 1035 §3.2.4). In an OPT record this field is the UDP payload size
/// instead (RFC 6891 §6.1.2), which is why the parser never interprets OPT's class as a class.
public struct DNSClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let `in` = DNSClass(1)
    public static let chaos = DNSClass(3)
    public static let hesiod = DNSClass(4)
    /// RFC 2136 §2.4: "none" in updates.
    public static let none = DNSClass(254)
    /// Query-only class (RFC 1035 §3.2.5).
    public static let any = DNSClass(255)

    /// Mnemonic, or `CLASSnnn` for others (RFC 3597 §5).
    public var description: String {
        switch rawValue {
        case 1: "IN"
        case 3: "CH"
        case 4: "HS"
        case 254: "NONE"
        case 255: "ANY"
        default: "CLASS\(rawValue)"
        }
    }
}

/// Header OPCODE, four bits (RFC 1035 §4.1.1, RFC 6895 §2.2).
public struct DNSOpcode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    /// Only the low four bits are kept: the field is four bits wide on the wire.
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }
    @inlinable public init(_ rawValue: UInt8) { self.init(rawValue: rawValue) }

    public static let query = DNSOpcode(0)
    public static let inverseQuery = DNSOpcode(1)
    public static let status = DNSOpcode(2)
    public static let notify = DNSOpcode(4)
    public static let update = DNSOpcode(5)
}

/// Response code, up to twelve bits: four in the header, eight more in the OPT record's TTL
/// (RFC 6891 §6.1.3). Values above 15 can only be sent with EDNS.
public struct DNSRcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    /// Only the low twelve bits are kept: that is all the wire can carry.
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue & 0x0FFF }
    @inlinable public init(_ rawValue: UInt16) { self.init(rawValue: rawValue) }

    public static let noError = DNSRcode(0)
    public static let formatError = DNSRcode(1)
    public static let serverFailure = DNSRcode(2)
    public static let nameError = DNSRcode(3)
    public static let notImplemented = DNSRcode(4)
    public static let refused = DNSRcode(5)
    /// EDNS version not supported (RFC 6891 §9); needs an OPT record to be sent.
    public static let badVersion = DNSRcode(16)

    /// The four bits that live in the header (RFC 1035 §4.1.1).
    @inlinable public var headerBits: UInt8 { UInt8(rawValue & 0x0F) }
    /// The eight bits that live in the OPT TTL (RFC 6891 §6.1.3).
    @inlinable public var extendedBits: UInt8 { UInt8(rawValue >> 4) }

    public var description: String {
        switch rawValue {
        case 0: "NOERROR"
        case 1: "FORMERR"
        case 2: "SERVFAIL"
        case 3: "NXDOMAIN"
        case 4: "NOTIMP"
        case 5: "REFUSED"
        case 16: "BADVERS"
        default: "RCODE\(rawValue)"
        }
    }
}

/// An EDNS option code (RFC 6891 §6.1.2, IANA "DNS EDNS0 Option Codes").
public struct EDNSOptionCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let clientSubnet = EDNSOptionCode(8)
    public static let cookie = EDNSOptionCode(10)
    public static let padding = EDNSOptionCode(12)
    /// Extended DNS Error (RFC 8914 §2).
    public static let extendedDNSError = EDNSOptionCode(15)
}

/// An Extended DNS Error INFO-CODE (RFC 8914 §4).
public struct EDEInfoCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let other = EDEInfoCode(0)
    public static let unsupportedDNSKEYAlgorithm = EDEInfoCode(1)
    public static let unsupportedDSDigestType = EDEInfoCode(2)
    public static let staleAnswer = EDEInfoCode(3)
    public static let forgedAnswer = EDEInfoCode(4)
    public static let dnssecIndeterminate = EDEInfoCode(5)
    public static let dnssecBogus = EDEInfoCode(6)
    public static let signatureExpired = EDEInfoCode(7)
    public static let signatureNotYetValid = EDEInfoCode(8)
    public static let dnskeyMissing = EDEInfoCode(9)
    public static let rrsigsMissing = EDEInfoCode(10)
    public static let noZoneKeyBitSet = EDEInfoCode(11)
    public static let nsecMissing = EDEInfoCode(12)
    public static let cachedError = EDEInfoCode(13)
    public static let notReady = EDEInfoCode(14)
    /// The operator's policy blocks this name (RFC 8914 §4.16): what a sinkhole sends.
    public static let blocked = EDEInfoCode(15)
    public static let censored = EDEInfoCode(16)
    public static let filtered = EDEInfoCode(17)
    public static let prohibited = EDEInfoCode(18)
    public static let staleNXDOMAINAnswer = EDEInfoCode(19)
    public static let notAuthoritative = EDEInfoCode(20)
    public static let notSupported = EDEInfoCode(21)
    public static let noReachableAuthority = EDEInfoCode(22)
    public static let networkError = EDEInfoCode(23)
    public static let invalidData = EDEInfoCode(24)
}
