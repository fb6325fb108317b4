/// An IPv4 address as carried in A RDATA (RFC 1035 §3.4.1), network byte order in `rawValue`.
public struct IPv4Address: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        rawValue = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
    }

    /// `0.0.0.0`, the blocked answer for A (SPEC §9).
    public static let any = IPv4Address(rawValue: 0)

    /// Dotted-quad text; nil unless exactly four decimal parts of 0…255.
    public init?(_ text: String) {
        var value: UInt32 = 0
        var parts = 0
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            // UInt8("+1") parses, so the digits are checked first.
            guard part.count >= 1, part.count <= 3, part.utf8.allSatisfy({ $0 &- 0x30 < 10 }),
                let byte = UInt8(part)
            else { return nil }
            value = value << 8 | UInt32(byte)
            parts += 1
        }
        guard parts == 4 else { return nil }
        rawValue = value
    }

    public var description: String {
        "\(rawValue >> 24).\(rawValue >> 16 & 0xFF).\(rawValue >> 8 & 0xFF).\(rawValue & 0xFF)"
    }
}

/// An IPv6 address as carried in AAAA RDATA (RFC 3596 §2.2), sixteen octets in network order.
public struct IPv6Address: Hashable, Sendable, CustomStringConvertible {
    /// The first and last eight octets, big-endian.
    public var high: UInt64
    public var low: UInt64
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// `::`, the blocked answer for AAAA (SPEC §9).
    public static let any = IPv6Address(high: 0, low: 0)

    /// Sixteen octets in network order; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    public var bytes: [UInt8] {
        (0..<16).map { index in
            let word = index < 8 ? high : low
            return UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(index % 8)))
        }
    }

    /// RFC 4291 §2.2 text: eight groups, or `::` for a run of zero groups; no embedded IPv4.
    public init?(_ text: String) {
        let halves = text.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard group.count >= 1, group.count <= 4, group.allSatisfy(\.isHexDigit),
                    let value = UInt16(group, radix: 16)
                else { return nil }
                result.append(value)
            }
            return result
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count <= 7 else { return nil }
            all += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, group) in all.enumerated() {
            if index < 4 { high = high << 16 | UInt64(group) } else { low = low << 16 | UInt64(group) }
        }
        self.init(high: high, low: low)
    }

    public var description: String {
        let groups = (0..<8).map { index in
            UInt16(truncatingIfNeeded: (index < 4 ? high : low) >> (48 - 16 * UInt64(index % 4)))
        }
        // RFC 5952 §4.2: compress the longest run of two or more zero groups, the first on a tie.
        var bestStart = -1
        var bestLength = 1
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            var end = index
            while end < 8, groups[end] == 0 { end += 1 }
            if end - index > bestLength { bestStart = index; bestLength = end - index }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestStart >= 0 else { return hex.joined(separator: ":") }
        return hex[..<bestStart].joined(separator: ":") + "::" + hex[(bestStart + bestLength)...].joined(separator: ":")
    }
}
