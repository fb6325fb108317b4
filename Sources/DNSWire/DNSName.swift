/// A domain name, held in uncompressed wire form: length-prefixed labels ending with the zero octet
/// of the root (RFC 1035 §3.1).
///
/// Comparison and hashing ignore ASCII case (RFC 1035 §2.3.3, RFC 4343 §3); the original case is kept
/// for the wire, so a client's 0x20 case randomisation is echoed back unchanged. Length octets are
/// at most 63, below `A` (0x41), so folding the whole wire form never disturbs them.
public struct DNSName: Hashable, Sendable, CustomStringConvertible {
    /// Uncompressed wire form, always valid: labels of 1…63 octets, total at most 255 octets.
    public private(set) var wireBytes: [UInt8]

    /// The root name, `.`.
    public static let root = DNSName(validatedWire: [0])

    @usableFromInline init(validatedWire: [UInt8]) { wireBytes = validatedWire }

    /// Wraps uncompressed wire bytes after checking them (RFC 1035 §3.1, §2.3.4).
    public init(wireBytes: [UInt8]) throws(DNSWireError) {
        var position = 0
        while true {
            guard position < wireBytes.count else {
                throw .unexpectedEnd(offset: position, needed: 1)
            }
            let length = Int(wireBytes[position])
            if length == 0 { break }
            guard length <= 63 else { throw .unsupportedLabelType(offset: position, byte: wireBytes[position]) }
            position += 1 + length
        }
        guard position + 1 == wireBytes.count else { throw .trailingOctets(offset: position + 1) }
        guard wireBytes.count <= NameCodec.maxNameLength else { throw .nameTooLong(offset: 0) }
        self.wireBytes = wireBytes
    }

    /// Parses presentation form (RFC 1035 §5.1): labels separated by dots, `\.`, `\\` and `\DDD`
    /// escapes; a trailing dot is optional; `""` and `"."` are the root.
    public init(_ text: String) throws(DNSWireError) {
        if text.isEmpty || text == "." {
            self = .root
            return
        }
        var wire: [UInt8] = []
        wire.reserveCapacity(text.utf8.count + 2)
        var label: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        func finishLabel() throws(DNSWireError) {
            guard !label.isEmpty else { throw .invalidPresentation(name: text, reason: "empty label") }
            guard label.count <= 63 else {
                throw .invalidPresentation(name: text, reason: "a label is longer than 63 octets")
            }
            wire.append(UInt8(label.count))
            wire.append(contentsOf: label)
            label.removeAll(keepingCapacity: true)
        }
        var endedWithDot = false
        while let byte = iterator.next() {
            endedWithDot = false
            switch byte {
            case UInt8(ascii: "."):
                try finishLabel()
                endedWithDot = true
            case UInt8(ascii: "\\"):
                guard let next = iterator.next() else {
                    throw .invalidPresentation(name: text, reason: "ends with a lone backslash")
                }
                if let d1 = next.decimalDigit {
                    guard let d2 = iterator.next()?.decimalDigit, let d3 = iterator.next()?.decimalDigit else {
                        throw .invalidPresentation(name: text, reason: "\\DDD needs three decimal digits")
                    }
                    let value = d1 * 100 + d2 * 10 + d3
                    guard value <= 255 else {
                        throw .invalidPresentation(name: text, reason: "\\DDD above 255")
                    }
                    label.append(UInt8(value))
                } else {
                    label.append(next)
                }
            default:
                label.append(byte)
            }
        }
        if !endedWithDot { try finishLabel() }
        wire.append(0)
        guard wire.count <= NameCodec.maxNameLength else {
            throw .invalidPresentation(name: text, reason: "longer than 255 octets in wire form")
        }
        self.wireBytes = wire
    }

    /// Number of labels, not counting the root.
    public var labelCount: Int {
        var count = 0
        var position = 0
        while position < wireBytes.count, wireBytes[position] != 0 {
            count += 1
            position += 1 + Int(wireBytes[position])
        }
        return count
    }

    /// The labels from the leftmost, each as its raw octets.
    public var labels: [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var position = 0
        while position < wireBytes.count, wireBytes[position] != 0 {
            let length = Int(wireBytes[position])
            result.append(wireBytes[position + 1..<position + 1 + length])
            position += 1 + length
        }
        return result
    }

    public var isRoot: Bool { wireBytes.count == 1 }

    /// The same name with ASCII letters lowercased (RFC 4343 §3).
    public var lowercased: DNSName {
        DNSName(validatedWire: wireBytes.map(DNSName.asciiLower))
    }

    /// True when `self` is `ancestor` or a name below it, compared without case; the check a
    /// blocklist needs for "a name and its subdomains".
    public func isEqualOrSubdomain(of ancestor: DNSName) -> Bool {
        let offset = wireBytes.count - ancestor.wireBytes.count
        guard offset >= 0 else { return false }
        // The suffix must start on a label boundary, not in the middle of a label's octets.
        var position = 0
        while position < offset { position += 1 + Int(wireBytes[position]) }
        guard position == offset else { return false }
        return DNSName.equalIgnoringCase(wireBytes[offset...], ancestor.wireBytes[...])
    }

    public static func == (lhs: DNSName, rhs: DNSName) -> Bool {
        lhs.wireBytes.count == rhs.wireBytes.count
            && equalIgnoringCase(lhs.wireBytes[...], rhs.wireBytes[...])
    }

    public func hash(into hasher: inout Hasher) {
        for byte in wireBytes { hasher.combine(DNSName.asciiLower(byte)) }
    }

    /// Presentation form with the case as received and no trailing dot; the root is `.`.
    /// Octets outside printable ASCII are written `\DDD`, and the special characters of
    /// RFC 1035 §5.1 get a backslash, so the text parses back to the same name.
    public var description: String { presentation(lowercase: false) }

    /// Presentation form lowercased, the canonical key for logs and lists.
    public var lowercasedPresentation: String { presentation(lowercase: true) }

    private func presentation(lowercase: Bool) -> String {
        if isRoot { return "." }
        var text: [UInt8] = []
        text.reserveCapacity(wireBytes.count)
        var position = 0
        while position < wireBytes.count, wireBytes[position] != 0 {
            if position > 0 { text.append(UInt8(ascii: ".")) }
            let length = Int(wireBytes[position])
            for byte in wireBytes[position + 1..<position + 1 + length] {
                let b = lowercase ? DNSName.asciiLower(byte) : byte
                switch b {
                case UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "("),
                    UInt8(ascii: ")"), UInt8(ascii: ";"), UInt8(ascii: "@"), UInt8(ascii: "$"):
                    text.append(UInt8(ascii: "\\"))
                    text.append(b)
                case 0x21...0x7E:
                    text.append(b)
                default:
                    text.append(UInt8(ascii: "\\"))
                    text.append(UInt8(ascii: "0") + b / 100)
                    text.append(UInt8(ascii: "0") + (b / 10) % 10)
                    text.append(UInt8(ascii: "0") + b % 10)
                }
            }
            position += 1 + length
        }
        return String(decoding: text, as: UTF8.self)
    }

    @inlinable static func asciiLower(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    @inlinable static func equalIgnoringCase(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var i = a.startIndex
        var j = b.startIndex
        while i < a.endIndex {
            if asciiLower(a[i]) != asciiLower(b[j]) { return false }
            i += 1
            j += 1
        }
        return true
    }

    /// Lowercases ASCII letters of wire bytes in place (RFC 4343 §3); used on the query fast path.
    @inlinable public static func lowercaseWire(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = asciiLower(bytes[index]) }
    }
}

extension UInt8 {
    fileprivate var decimalDigit: Int? {
        self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") ? Int(self - UInt8(ascii: "0")) : nil
    }
}
