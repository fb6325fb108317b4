/// A domain name in the one form every part of Scroll Off compares: lowercase ASCII, A-labels for
/// internationalized labels, no trailing dot (SPEC §1).
public struct DomainName: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The normalized text, for example `www.xn--bcher-kva.example`.
    public let text: String

    /// Normalizes `input` (any case, optional trailing dot, Unicode or A-labels).
    public init(_ input: some StringProtocol) throws(DomainNameError) {
        let utf8 = Array(input.utf8)
        var output: [UInt8] = []
        try utf8.withUnsafeBufferPointer { (buffer) throws(DomainNameError) in
            try DomainNormalizer.normalize(buffer, into: &output)
        }
        text = String(decoding: output, as: UTF8.self)
    }

    /// Wraps text that is already normalized, such as a rule read back from a `RuleList`.
    init(normalizedText: String) { text = normalizedText }

    /// The labels from left to right: `["www", "example", "com"]`.
    public var labels: [Substring] { text.split(separator: ".", omittingEmptySubsequences: false) }

    /// The parent name, or nil for a single label: `www.example.com` → `example.com`.
    public var parent: DomainName? {
        guard let dot = text.firstIndex(of: ".") else { return nil }
        return DomainName(normalizedText: String(text[text.index(after: dot)...]))
    }

    public static func < (a: DomainName, b: DomainName) -> Bool { a.text < b.text }
    public var description: String { text }
}

/// The byte-level normalization behind `DomainName`, shared with the list parser so that a
/// million-line list is read without making a `String` per line.
///
/// Rules, and where they come from:
/// - ASCII letters are lowercased; comparison is case-insensitive (RFC 4343, SPEC §1).
/// - One trailing dot (the root) is dropped (RFC 1034 §3.1).
/// - Labels are 1…63 octets, the name at most 253 characters (RFC 1035 §2.3.4).
/// - Characters: letters, digits and `-` (RFC 1123 §2.1), plus `_`, which real lists contain
///   (`_dmarc`, tracking hosts) and which DNS itself allows (RFC 2181 §11).
/// - A name whose last label is all digits is an address, not a host name (RFC 3696 §2).
/// - Unicode labels are mapped to lowercase, then encoded as `xn--` A-labels with Punycode
///   (RFC 5891 §4, RFC 3492). The ideographic full stops U+3002, U+FF0E and U+FF61 separate labels
///   as `.` does (UTS #46 §4). Only this subset of UTS #46 is done: no NFKC, no width folding.
/// - An `xn--` label must decode as Punycode, so a corrupt A-label is reported, not stored.
enum DomainNormalizer {
    static let maxNameLength = 253
    static let maxLabelLength = 63

    /// Replaces `output` with the normalized form of `input`.
    static func normalize(_ input: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) throws(DomainNameError) {
        output.removeAll(keepingCapacity: true)
        var hasNonASCII = false
        for byte in input where byte >= 0x80 { hasNonASCII = true; break }
        if hasNonASCII {
            try normalizeUnicode(input, into: &output)
        } else {
            for byte in input { output.append(lowercased(byte)) }
        }
        try validateASCII(&output)
    }

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// Checks lowercase ASCII in place and drops one trailing dot.
    private static func validateASCII(_ name: inout [UInt8]) throws(DomainNameError) {
        if name.last == UInt8(ascii: ".") { name.removeLast() }
        guard !name.isEmpty else { throw .empty }
        guard name.count <= maxNameLength else { throw .nameTooLong(length: name.count) }
        var labelStart = 0
        var lastLabelAllDigits = true
        for index in 0...name.count {
            let byte = index < name.count ? name[index] : UInt8(ascii: ".")
            if byte == UInt8(ascii: ".") {
                let length = index - labelStart
                guard length > 0 else { throw .emptyLabel }
                guard length <= maxLabelLength else { throw .labelTooLong(length: length) }
                if length > 4, name[labelStart] == UInt8(ascii: "x"), name[labelStart + 1] == UInt8(ascii: "n"),
                   name[labelStart + 2] == UInt8(ascii: "-"), name[labelStart + 3] == UInt8(ascii: "-") {
                    try checkPunycode(name[(labelStart + 4)..<index], wholeLabel: name[labelStart..<index])
                }
                if index < name.count { lastLabelAllDigits = true }
                labelStart = index + 1
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                break
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                lastLabelAllDigits = false
            case UInt8(ascii: ":") where name.allSatisfy(isIPv6Character):
                throw .ipAddress
            default:
                throw .invalidCharacter(Unicode.Scalar(byte))
            }
        }
        if lastLabelAllDigits { throw .ipAddress }
    }

    private static func isIPv6Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: ":"), UInt8(ascii: "."): true
        default: false
        }
    }

    private static func checkPunycode(_ digits: ArraySlice<UInt8>, wholeLabel: ArraySlice<UInt8>) throws(DomainNameError) {
        let text = String(decoding: digits, as: UTF8.self)
        do {
            _ = try Punycode.decode(text)
        } catch {
            throw .invalidPunycode(label: String(decoding: wholeLabel, as: UTF8.self), error)
        }
    }

    /// UTS #46-style mapping of the Unicode subset described above, producing ASCII with A-labels.
    private static func normalizeUnicode(_ input: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) throws(DomainNameError) {
        guard let text = String(validating: input, as: UTF8.self) else { throw .notUTF8 }
        var label: [Unicode.Scalar] = []
        func flush() throws(DomainNameError) {
            if label.allSatisfy(\.isASCII) {
                for scalar in label { output.append(UInt8(scalar.value)) }
            } else {
                guard label.count <= maxLabelLength else { throw .labelTooLong(length: label.count) }
                let encoded: String
                do {
                    encoded = try Punycode.encode(label)
                } catch {
                    throw .invalidPunycode(label: String(String.UnicodeScalarView(label)), error)
                }
                output.append(contentsOf: "xn--".utf8)
                output.append(contentsOf: encoded.utf8)
            }
            label.removeAll(keepingCapacity: true)
        }
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x2E, 0x3002, 0xFF0E, 0xFF61:
                try flush()
                output.append(UInt8(ascii: "."))
            case 0..<0x80:
                label.append(Unicode.Scalar(lowercased(UInt8(scalar.value))))
            default:
                for mapped in scalar.properties.lowercaseMapping.unicodeScalars {
                    guard isAllowedNonASCII(mapped) else { throw .invalidCharacter(scalar) }
                    label.append(mapped)
                }
            }
        }
        try flush()
    }

    /// Letters, marks and digits: the code points IDNA2008 can allow (RFC 5892 §2.1, §2.2). Symbols,
    /// punctuation, spaces and controls are refused.
    private static func isAllowedNonASCII(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return true }
        switch scalar.properties.generalCategory {
        case .lowercaseLetter, .uppercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber:
            return true
        default:
            return false
        }
    }
}
