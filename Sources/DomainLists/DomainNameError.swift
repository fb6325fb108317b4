/// Why a piece of text is not a usable domain name. Each message says what is wrong and what to do.
public enum DomainNameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing left once the trailing dot is dropped.
    case empty
    /// More than 253 characters in text form (RFC 1035 §2.3.4: 255 octets on the wire).
    case nameTooLong(length: Int)
    /// Two dots in a row, or a leading dot.
    case emptyLabel
    /// A label longer than 63 characters (RFC 1035 §2.3.4).
    case labelTooLong(length: Int)
    /// A character that no host name contains (RFC 1123 §2.1 letters, digits, hyphen; plus `_`).
    case invalidCharacter(Unicode.Scalar)
    /// The bytes are not valid UTF-8, so the name cannot be read at all.
    case notUTF8
    /// An IPv4 or IPv6 address, or a name whose last label is all digits (RFC 3696 §2).
    case ipAddress
    /// An `xn--` label whose Punycode does not decode (RFC 3492 §6.2).
    case invalidPunycode(label: String, Punycode.Failure)

    public var description: String {
        switch self {
        case .empty:
            "the name is empty; write a domain such as example.com"
        case .nameTooLong(let length):
            "the name is \(length) characters long; DNS names have at most 253"
        case .emptyLabel:
            "the name has an empty label (two dots in a row or a leading dot); remove the extra dot"
        case .labelTooLong(let length):
            "a label is \(length) characters long; each part between dots has at most 63"
        case .invalidCharacter(let scalar):
            "\(Self.describe(scalar)) cannot appear in a domain name; names use letters, digits, '-' and '_'"
        case .notUTF8:
            "the name is not valid UTF-8 text; save the list as UTF-8"
        case .ipAddress:
            "this is an IP address, not a domain name; lists block names, so write the name instead"
        case .invalidPunycode(let label, let failure):
            "the label '\(label)' is not valid Punycode: \(failure)"
        }
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        if scalar.properties.generalCategory == .control || scalar == " " {
            return "the invisible character \(code)"
        }
        return "'\(Character(scalar))' (\(code))"
    }
}
