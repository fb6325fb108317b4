/// Bounds-checked reads over a received message. Every read checks the octets left first and
/// throws instead of trapping, which is what makes the parser total (RFC 9267 §2).
@usableFromInline
struct WireReader {
    @usableFromInline let buffer: UnsafeRawBufferPointer
    @usableFromInline var offset: Int

    @inlinable init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    @inlinable var remaining: Int { buffer.count - offset }

    @inlinable func require(_ count: Int) throws(DNSWireError) {
        guard count <= buffer.count - offset else {
            throw .unexpectedEnd(offset: offset, needed: count)
        }
    }

    @inlinable mutating func u8() throws(DNSWireError) -> UInt8 {
        try require(1)
        defer { offset += 1 }
        return buffer[offset]
    }

    @inlinable mutating func u16() throws(DNSWireError) -> UInt16 {
        try require(2)
        defer { offset += 2 }
        return UInt16(buffer[offset]) << 8 | UInt16(buffer[offset + 1])
    }

    @inlinable mutating func u32() throws(DNSWireError) -> UInt32 {
        try require(4)
        defer { offset += 4 }
        return UInt32(buffer[offset]) << 24 | UInt32(buffer[offset + 1]) << 16
            | UInt32(buffer[offset + 2]) << 8 | UInt32(buffer[offset + 3])
    }

    @inlinable mutating func bytes(_ count: Int) throws(DNSWireError) -> [UInt8] {
        try require(count)
        defer { offset += count }
        return Array(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]))
    }

    /// As `skipName`, returning whether the name ends in a compression pointer.
    @inlinable mutating func skipNameReportingPointer() throws(DNSWireError) -> Bool {
        var unused: [UInt8] = []
        let start = offset
        let (end, length) = try NameCodec.read(buffer, at: offset, into: &unused, store: false)
        offset = end
        // An uncompressed name occupies exactly its length in place.
        return end - start != length
    }

    /// Reads the name at the current offset and moves past it in place (not past pointer targets).
    @inlinable mutating func name(into out: inout [UInt8]) throws(DNSWireError) {
        offset = try NameCodec.read(buffer, at: offset, into: &out, store: true).end
    }

    /// Moves past the name at the current offset, validating it with the same limits as `name`.
    /// Returns the name's uncompressed length, so 1 means the root however it was written.
    @inlinable mutating func skipName() throws(DNSWireError) -> Int {
        var unused: [UInt8] = []
        let (end, length) = try NameCodec.read(buffer, at: offset, into: &unused, store: false)
        offset = end
        return length
    }
}

/// The one name reader: iterative, so a hostile chain of pointers costs a bounded loop, never a
/// deep stack (RFC 9267 §2).
@usableFromInline
enum NameCodec {
    /// RFC 9267 §2: a name of at most 255 octets has at most 127 labels, so at most 126 pointers
    /// can each add something; more means a loop or padding meant to burn CPU.
    @usableFromInline static let maxPointers = 126
    /// RFC 1035 §2.3.4, counted in wire form including the root's zero octet.
    @usableFromInline static let maxNameLength = 255

    /// Reads the name starting at `start`, appending its uncompressed wire form to `out` when
    /// `store` is set. Returns the offset just past the name where it sits (after the first pointer
    /// if it is compressed), per RFC 1035 §4.1.4, and the uncompressed length.
    @inlinable
    static func read(
        _ buffer: UnsafeRawBufferPointer, at start: Int, into out: inout [UInt8], store: Bool
    ) throws(DNSWireError) -> (end: Int, length: Int) {
        var position = start
        var endInPlace = -1
        var pointers = 0
        var length = 0
        // Octets are copied a run at a time (a run ends at a pointer or at the root), so an
        // uncompressed name costs one append, not one per label.
        var runStart = start
        while true {
            guard position < buffer.count else { throw .unexpectedEnd(offset: position, needed: 1) }
            let first = buffer[position]
            switch first & 0xC0 {
            case 0x00:
                let labelLength = Int(first)
                length += labelLength + 1
                guard length <= maxNameLength else { throw .nameTooLong(offset: start) }
                if labelLength == 0 {
                    if store { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[runStart...position])) }
                    return (endInPlace < 0 ? position + 1 : endInPlace, length)
                }
                guard labelLength < buffer.count - position else {
                    throw .unexpectedEnd(offset: position + 1, needed: labelLength)
                }
                position += 1 + labelLength
            case 0xC0:
                guard position + 1 < buffer.count else { throw .unexpectedEnd(offset: position, needed: 2) }
                let target = Int(first & 0x3F) << 8 | Int(buffer[position + 1])
                // Strictly backward: together with the hop limit this makes every chain finite.
                guard target < position else { throw .pointerNotBackward(offset: position, target: target) }
                // The first name starts at 12; header octets read as labels would change meaning
                // whenever the ID is rewritten, as a cache or a forwarder does.
                guard target >= 12 else { throw .pointerIntoHeader(offset: position, target: target) }
                pointers += 1
                guard pointers <= maxPointers else { throw .tooManyPointers(offset: start) }
                if endInPlace < 0 { endInPlace = position + 2 }
                if store, position > runStart {
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[runStart..<position]))
                }
                position = target
                runStart = target
            default:
                // 0x40 (extended label, RFC 6891 §5 deprecated it) and 0x80 (reserved).
                throw .unsupportedLabelType(offset: position, byte: first)
            }
        }
    }
}
