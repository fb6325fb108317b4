/// Punycode, the Bootstring encoding of Unicode for IDNA (RFC 3492).
///
/// Written from the algorithm in RFC 3492 §6 with the parameter values of §5. The encoder never
/// emits mixed-case annotations (optional, RFC 3492 Appendix A): DNS names are compared
/// case-insensitively and this module lowercases every name (SPEC §1).
public enum Punycode {
    /// Why a Punycode string could not be decoded, or a label could not be encoded.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// A character that is not a Punycode digit, or a non-basic character before the last `-`.
        case invalidCharacter(UInt8)
        /// The digits ran out in the middle of a variable-length integer (RFC 3492 §6.2).
        case truncated
        /// A value went past 2^32 − 1 (RFC 3492 §6.4 overflow handling).
        case overflow
        /// The decoded value is not a Unicode scalar, or is a basic code point (RFC 3492 §6.2).
        case invalidCodePoint(UInt32)

        public var description: String {
            switch self {
            case .invalidCharacter(let byte):
                "byte 0x\(String(byte, radix: 16)) is not a Punycode digit; check the label after 'xn--'"
            case .truncated:
                "the Punycode digits end in the middle of a number; the label after 'xn--' is cut short"
            case .overflow:
                "the Punycode value is too large to be a real label; the label after 'xn--' is corrupt"
            case .invalidCodePoint(let value):
                "the Punycode decodes to code point 0x\(String(value, radix: 16)), which is not allowed in a name"
            }
        }
    }

    // RFC 3492 §5: parameter values for Punycode.
    private static let base: UInt32 = 36
    private static let tMin: UInt32 = 1
    private static let tMax: UInt32 = 26
    private static let skew: UInt32 = 38
    private static let damp: UInt32 = 700
    private static let initialBias: UInt32 = 72
    private static let initialN: UInt32 = 0x80
    private static let delimiter = UInt8(ascii: "-")

    /// Encodes code points into Punycode digits (without the `xn--` prefix). RFC 3492 §6.3.
    public static func encode(_ input: [Unicode.Scalar]) throws(Failure) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 2)
        for scalar in input where scalar.value < initialN {
            output.append(UInt8(scalar.value))
        }
        let basicCount = UInt32(output.count)
        var handled = basicCount
        if basicCount > 0 { output.append(delimiter) }

        var n = initialN
        var delta: UInt32 = 0
        var bias = initialBias
        let total = UInt32(input.count)
        while handled < total {
            // The smallest code point not yet handled; exists because handled < total.
            var m = UInt32.max
            for scalar in input where scalar.value >= n && scalar.value < m { m = scalar.value }
            delta = try add(delta, try multiply(m - n, handled + 1))
            n = m
            for scalar in input {
                if scalar.value < n { delta = try add(delta, 1) }
                if scalar.value == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = threshold(k, bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta, handled + 1, firstTime: handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta = try add(delta, 1)
            n = try add(n, 1)
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes Punycode digits (without the `xn--` prefix) into code points. RFC 3492 §6.2.
    public static func decode(_ input: some StringProtocol) throws(Failure) -> [Unicode.Scalar] {
        let bytes = Array(input.utf8)
        var output: [UInt32] = []
        let lastDelimiter = bytes.lastIndex(of: delimiter)
        if let lastDelimiter {
            for byte in bytes[..<lastDelimiter] {
                guard byte < 0x80 else { throw .invalidCharacter(byte) }
                output.append(UInt32(byte))
            }
        }
        var position = lastDelimiter.map { $0 + 1 } ?? 0
        var n = initialN
        var i: UInt32 = 0
        var bias = initialBias
        while position < bytes.count {
            let oldI = i
            var w: UInt32 = 1
            var k = base
            while true {
                guard position < bytes.count else { throw .truncated }
                let byte = bytes[position]
                position += 1
                guard let value = digitValue(byte) else { throw .invalidCharacter(byte) }
                i = try add(i, try multiply(value, w))
                let t = threshold(k, bias)
                if value < t { break }
                w = try multiply(w, base - t)
                k += base
            }
            let length = UInt32(output.count + 1)
            bias = adapt(i - oldI, length, firstTime: oldI == 0)
            n = try add(n, i / length)
            i %= length
            guard n >= initialN, Unicode.Scalar(n) != nil else { throw .invalidCodePoint(n) }
            output.insert(n, at: Int(i))
            i += 1
        }
        return output.compactMap(Unicode.Scalar.init)
    }

    /// RFC 3492 §6.1 bias adaptation.
    private static func adapt(_ delta: UInt32, _ numPoints: UInt32, firstTime: Bool) -> UInt32 {
        var delta = firstTime ? delta / damp : delta / 2
        delta += delta / numPoints
        var k: UInt32 = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (((base - tMin + 1) * delta) / (delta + skew))
    }

    private static func threshold(_ k: UInt32, _ bias: UInt32) -> UInt32 {
        if k <= bias { return tMin }
        if k >= bias + tMax { return tMax }
        return k - bias
    }

    private static func digit(_ value: UInt32) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }

    private static func digitValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte - UInt8(ascii: "a"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0")) + 26
        default: nil
        }
    }

    private static func add(_ a: UInt32, _ b: UInt32) throws(Failure) -> UInt32 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { throw .overflow }
        return sum
    }

    private static func multiply(_ a: UInt32, _ b: UInt32) throws(Failure) -> UInt32 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        if overflow { throw .overflow }
        return product
    }
}
