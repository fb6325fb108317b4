/// Writes wire-format messages into a buffer it keeps, compressing names (RFC 1035 §4.1.4).
///
/// Reuse one writer per thread or event loop and call `reset()` between messages: the buffer and
/// the compression table keep their capacity, so steady-state writing does not allocate.
public struct DNSWriter: Sendable {
    /// The octets written so far.
    public private(set) var bytes: [UInt8]
    /// Hash of a lowercased name suffix → offset where that suffix was written.
    private var compression: [UInt64: UInt16]
    /// Label start offsets of the name being written; scratch kept to avoid allocating.
    private var labelStarts: [Int]
    private var suffixHashes: [UInt64]

    /// Pointers carry 14 bits of offset (RFC 1035 §4.1.4).
    private static let maxPointerTarget = 0x3FFF
    /// Bounds the table on huge messages; names past it are written uncompressed.
    private static let maxCompressionEntries = 1024

    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
        compression = [:]
        compression.reserveCapacity(32)
        labelStarts = []
        labelStarts.reserveCapacity(128)
        suffixHashes = []
        suffixHashes.reserveCapacity(128)
    }

    /// Empties the buffer and the compression table, keeping their capacity.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        compression.removeAll(keepingCapacity: true)
    }

    /// Cuts the buffer back to `length` octets, forgetting compression targets beyond it, so
    /// later names never point into octets that are gone.
    public mutating func truncate(to length: Int) {
        guard length < bytes.count else { return }
        bytes.removeSubrange(max(0, length)...)
        if !compression.isEmpty { compression = compression.filter { Int($0.value) < length } }
    }

    public mutating func u8(_ value: UInt8) { bytes.append(value) }

    public mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func u32(_ value: UInt32) {
        bytes.append(UInt8(value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func append(contentsOf octets: some Sequence<UInt8>) { bytes.append(contentsOf: octets) }

    /// Overwrites two octets already written, for counts and RDLENGTH filled in afterwards.
    public mutating func patchU16(_ value: UInt16, at offset: Int) {
        guard offset >= 0, offset + 1 < bytes.count else { return }
        bytes[offset] = UInt8(value >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    /// Writes a name, replacing its longest suffix already in the message with a pointer when
    /// `compress` is set (RFC 1035 §4.1.4), and recording its own suffixes as future targets.
    /// Matching ignores case (RFC 4343 §3), like other servers; the name keeps its meaning.
    public mutating func name(_ name: DNSName, compress: Bool = true) {
        self.name(wire: name.wireBytes, compress: compress)
    }

    /// As `name(_:compress:)` for uncompressed wire bytes already known to be valid.
    mutating func name(wire: [UInt8], compress: Bool) {
        labelStarts.removeAll(keepingCapacity: true)
        var position = 0
        while position < wire.count, wire[position] != 0 {
            labelStarts.append(position)
            position += 1 + Int(wire[position])
        }
        // Right to left, so each suffix's hash folds in the one after it.
        suffixHashes.removeAll(keepingCapacity: true)
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for index in stride(from: labelStarts.count - 1, through: 0, by: -1) {
            let start = labelStarts[index]
            let end = start + 1 + Int(wire[start])
            for offset in start..<end {
                hash = (hash ^ UInt64(DNSName.asciiLower(wire[offset]))) &* 0x0000_0100_0000_01B3
            }
            hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
            suffixHashes.append(hash)
        }
        var pointerTarget = -1
        var firstUncompressed = labelStarts.count
        if compress {
            for index in 0..<labelStarts.count {
                let hash = suffixHashes[labelStarts.count - 1 - index]
                if let target = compression[hash], matches(wire, from: labelStarts[index], at: Int(target)) {
                    pointerTarget = Int(target)
                    firstUncompressed = index
                    break
                }
            }
        }
        for index in 0..<firstUncompressed {
            let offset = bytes.count
            if offset <= Self.maxPointerTarget, compression.count < Self.maxCompressionEntries {
                let hash = suffixHashes[labelStarts.count - 1 - index]
                if compression[hash] == nil { compression[hash] = UInt16(offset) }
            }
            let start = labelStarts[index]
            bytes.append(contentsOf: wire[start..<start + 1 + Int(wire[start])])
        }
        if pointerTarget >= 0 {
            u16(0xC000 | UInt16(pointerTarget))
        } else {
            bytes.append(0)
        }
    }

    /// True when the suffix of `wire` from `start` equals, ignoring case, the name written at
    /// `offset`. Pointers in our own output are followed; they only ever point backward.
    private func matches(_ wire: [UInt8], from start: Int, at offset: Int) -> Bool {
        var mine = start
        var theirs = offset
        var hops = 0
        while theirs < bytes.count, mine < wire.count {
            let length = bytes[theirs]
            if length >= 0xC0 {
                guard theirs + 1 < bytes.count, hops < NameCodec.maxPointers else { return false }
                theirs = Int(length & 0x3F) << 8 | Int(bytes[theirs + 1])
                hops += 1
                continue
            }
            guard length == wire[mine] else { return false }
            if length == 0 { return true }
            let count = Int(length)
            guard theirs + count < bytes.count else { return false }
            for step in 1...count where DNSName.asciiLower(bytes[theirs + step]) != DNSName.asciiLower(wire[mine + step]) {
                return false
            }
            mine += 1 + count
            theirs += 1 + count
        }
        return false
    }
}
