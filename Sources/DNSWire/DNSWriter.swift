/// Writes wire-format messages into a buffer it keeps, compressing names (RFC 1035 §4.1.4).
///
/// Reuse one writer per thread or event loop and call `reset()` between messages: the buffer and
/// the compression table keep their capacity, so steady-state writing does not allocate. Read
/// the result with `withUnsafeBytes` on the hot path; `bytes` copies it into a new array.
public struct DNSWriter: Sendable {
    /// Zero-filled space; the first `count` octets are the message. Kept longer than the message so
    /// writes are plain stores after one capacity check, not per-octet `append`s.
    private var storage: [UInt8]
    /// Octets written so far.
    public private(set) var count: Int
    /// Hash of a lowercased name suffix → offset where that suffix was written.
    private var compression: CompressionTable
    /// Label start offsets of the name being written; scratch kept to avoid allocating.
    private var labelStarts: [Int]
    private var suffixHashes: [UInt64]

    /// Pointers carry 14 bits of offset (RFC 1035 §4.1.4).
    private static let maxPointerTarget = 0x3FFF

    public init(capacity: Int = 512) {
        storage = Array(repeating: 0, count: max(capacity, 64))
        count = 0
        compression = CompressionTable()
        labelStarts = []
        labelStarts.reserveCapacity(128)
        suffixHashes = []
        suffixHashes.reserveCapacity(128)
    }

    /// A copy of the octets written so far.
    public var bytes: [UInt8] { Array(storage[0..<count]) }

    /// Lends the octets written so far without copying them.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// Empties the buffer and the compression table, keeping their capacity.
    public mutating func reset() {
        count = 0
        compression.removeAll()
    }

    /// Cuts the buffer back to `length` octets, forgetting compression targets beyond it, so
    /// later names never point into octets that are gone.
    public mutating func truncate(to length: Int) {
        guard length < count else { return }
        count = max(0, length)
        if compression.count > 0 { compression.removeEntries(atOrAfter: count) }
    }

    /// Makes room for `extra` more octets, doubling so appends stay amortised O(1).
    @inline(__always) private mutating func reserve(_ extra: Int) {
        if extra > storage.count - count { grow(count + extra) }
    }

    private mutating func grow(_ needed: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(needed, storage.count * 2) - storage.count))
    }

    public mutating func u8(_ value: UInt8) {
        reserve(1)
        storage[count] = value
        count += 1
    }

    public mutating func u16(_ value: UInt16) {
        reserve(2)
        let at = count
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.bigEndian, toByteOffset: at, as: UInt16.self) }
        count += 2
    }

    public mutating func u32(_ value: UInt32) {
        reserve(4)
        let at = count
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.bigEndian, toByteOffset: at, as: UInt32.self) }
        count += 4
    }

    /// Writes a run of fixed-size fields of `size` octets in total with one capacity check and one
    /// uniqueness check, instead of one per field: a reply is mostly such runs.
    @inline(__always)
    mutating func fields(_ size: Int, _ body: (inout FieldCursor) -> Void) {
        reserve(size)
        let at = count
        storage.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var cursor = FieldCursor(base: base + at, limit: size)
            body(&cursor)
        }
        count += size
    }

    /// Appends raw octets (a name's wire form, RDATA).
    public mutating func append(_ octets: UnsafeRawBufferPointer) {
        guard !octets.isEmpty else { return }
        reserve(octets.count)
        let at = count
        storage.withUnsafeMutableBytes { target in
            UnsafeMutableRawBufferPointer(rebasing: target[at..<at + octets.count]).copyMemory(from: octets)
        }
        count += octets.count
    }

    public mutating func append(_ octets: [UInt8]) {
        octets.withUnsafeBytes { append($0) }
    }

    public mutating func append(_ octets: ArraySlice<UInt8>) {
        octets.withUnsafeBytes { append($0) }
    }

    public mutating func append(contentsOf octets: some Sequence<UInt8>) {
        let copied: Void? = octets.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil { for octet in octets { u8(octet) } }
    }

    /// Overwrites two octets already written, for counts and RDLENGTH filled in afterwards.
    public mutating func patchU16(_ value: UInt16, at offset: Int) {
        guard offset >= 0, offset + 1 < count else { return }
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt16.self) }
    }

    /// Reads back two octets already written.
    func readU16(at offset: Int) -> UInt16 {
        guard offset >= 0, offset + 1 < count else { return 0 }
        return UInt16(storage[offset]) << 8 | UInt16(storage[offset + 1])
    }

    /// Writes a name, replacing its longest suffix already in the message with a pointer when
    /// `compress` is set (RFC 1035 §4.1.4), and recording its own suffixes as future targets.
    /// Matching ignores case (RFC 4343 §3), like other servers; the name keeps its meaning.
    public mutating func name(_ name: DNSName, compress: Bool = true) {
        self.name(wire: name.wireBytes, compress: compress)
    }

    /// As `name(_:compress:)` for uncompressed wire bytes already known to be valid.
    mutating func name(wire: [UInt8], compress: Bool) {
        hashSuffixes(of: wire)
        var pointerTarget = -1
        var firstUncompressed = labelStarts.count
        if compress {
            for index in 0..<labelStarts.count {
                let hash = suffixHashes[labelStarts.count - 1 - index]
                if let target = compression.lookup(hash), matches(wire, from: labelStarts[index], at: Int(target)) {
                    pointerTarget = Int(target)
                    firstUncompressed = index
                    break
                }
            }
        }
        for index in 0..<firstUncompressed {
            let offset = count
            if offset <= Self.maxPointerTarget {
                compression.insertIfAbsent(suffixHashes[labelStarts.count - 1 - index], offset: UInt16(offset))
            }
            let start = labelStarts[index]
            append(wire[start..<start + 1 + Int(wire[start])])
        }
        if pointerTarget >= 0 {
            u16(0xC000 | UInt16(pointerTarget))
        } else {
            u8(0)
        }
    }

    /// Records the suffixes of a name already written uncompressed at `offset` as pointer
    /// targets; the response builder copies the question first and registers it only when a
    /// later name could use it.
    mutating func register(wire: [UInt8], at offset: Int) {
        hashSuffixes(of: wire)
        for index in 0..<labelStarts.count where offset + labelStarts[index] <= Self.maxPointerTarget {
            compression.insertIfAbsent(
                suffixHashes[labelStarts.count - 1 - index], offset: UInt16(offset + labelStarts[index]))
        }
    }

    /// Fills `labelStarts` and `suffixHashes` (rightmost suffix first) for `wire`. FNV-1a over
    /// lowercased octets, folded right to left so each suffix's hash includes the one after it.
    private mutating func hashSuffixes(of wire: [UInt8]) {
        labelStarts.removeAll(keepingCapacity: true)
        var position = 0
        while position < wire.count, wire[position] != 0 {
            labelStarts.append(position)
            position += 1 + Int(wire[position])
        }
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
    }

    /// True when the suffix of `wire` from `start` equals, ignoring case, the name written at
    /// `offset`. Pointers in our own output are followed; they only ever point backward.
    private func matches(_ wire: [UInt8], from start: Int, at offset: Int) -> Bool {
        var mine = start
        var theirs = offset
        var hops = 0
        while theirs < count, mine < wire.count {
            let length = storage[theirs]
            if length >= 0xC0 {
                guard theirs + 1 < count, hops < NameCodec.maxPointers else { return false }
                theirs = Int(length & 0x3F) << 8 | Int(storage[theirs + 1])
                hops += 1
                continue
            }
            guard length == wire[mine] else { return false }
            if length == 0 { return true }
            let labelLength = Int(length)
            guard theirs + labelLength < count else { return false }
            for step in 1...labelLength
            where DNSName.asciiLower(storage[theirs + step]) != DNSName.asciiLower(wire[mine + step]) {
                return false
            }
            mine += 1 + labelLength
            theirs += 1 + labelLength
        }
        return false
    }
}

/// Big-endian stores into room reserved by `DNSWriter.fields`; writes past the reserved size are
/// dropped rather than trusted, so a miscounted run can never write outside the buffer.
struct FieldCursor {
    let base: UnsafeMutableRawPointer
    let limit: Int
    private(set) var offset = 0

    init(base: UnsafeMutableRawPointer, limit: Int) {
        self.base = base
        self.limit = limit
    }

    @inline(__always) mutating func u8(_ value: UInt8) {
        guard offset + 1 <= limit else { return }
        base.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    @inline(__always) mutating func u16(_ value: UInt16) {
        guard offset + 2 <= limit else { return }
        base.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt16.self)
        offset += 2
    }

    @inline(__always) mutating func u32(_ value: UInt32) {
        guard offset + 4 <= limit else { return }
        base.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
        offset += 4
    }
}
