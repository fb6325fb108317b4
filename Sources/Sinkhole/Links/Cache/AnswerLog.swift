import DNSWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The answer cache's stored answers: one circular log of records in a single region, and an
/// open-addressing index from question to record. Oldest stored is evicted first (the cache's
/// order), which is the order a circular log frees space in, so eviction is a move of the tail.
///
/// Why a log and not an object per answer: kept as objects, every cached answer was four heap
/// blocks (its key's name, the answer object, its wire bytes, its TTL offsets) living for as long
/// as 100,000 newer answers took to push it out, allocated among the short-lived blocks of every
/// forward. With the cache full and evicting, glibc's free lists grew from 24 to 53 MiB over 10 M
/// names while the bytes in use stayed flat (the forwarder soak, docs/benchmarks.md): freed answers left
/// holes the next answers' different sizes did not fit. Here the cache allocates nothing per
/// answer: the region grows only while the cache fills (to what its capacity will need, see
/// `grow`), the index (load ≤ ½) only while answers grow in number, and neither ever shrinks short
/// of a reconfiguration.
///
/// Not thread-safe: `@unchecked Sendable` because the cache only touches it under its mutex.
final class AnswerLog: @unchecked Sendable {
    /// The question a record answers: the cache key, read from the record without copying.
    struct Found {
        var position: Int
        var expiresAt: UInt64
        var staleBase: UInt64
    }

    /// One index slot: 32 bits of the key's hash (to skip most compares) and the record's
    /// position plus one (0: empty).
    private struct Slot {
        var tag: UInt32
        var position: UInt32
        static let empty = Slot(tag: 0, position: 0)
    }

    // Record layout; every record starts 8-aligned. A length of 0 marks the rest of the region as
    // unused (the next record did not fit before its end and went to the start).
    private static let lengthAt = 0  // UInt32: the whole record, padded to 8
    private static let hashAt = 4  // UInt32
    private static let expiresAt = 8  // UInt64: monotonic ns
    private static let staleBaseAt = 16  // UInt64: monotonic ns
    private static let receivedAt = 24  // UInt64: monotonic ns
    private static let lifetimeAt = 32  // UInt32: natural lifetime, s
    private static let cnameLengthAt = 36  // UInt32
    private static let wireLengthAt = 40  // UInt16 (RFC 1035 §4.2.2: at most 65,535)
    private static let questionEndAt = 42  // UInt16
    private static let additionalStartAt = 44  // UInt16
    private static let ttlCountAt = 46  // UInt16
    private static let typeAt = 48  // UInt16
    private static let classAt = 50  // UInt16
    private static let partsNameLengthAt = 52  // UInt16: the answer's question name
    private static let keyNameLengthAt = 54  // UInt8 (a name is at most 255 octets)
    private static let flagsAt = 55  // UInt8: the key's DO and CD bits
    private static let rcodeAt = 56  // UInt8
    private static let bitsAt = 57  // UInt8: 1 negative, 2 served stale
    private static let headerSize = 64  // then: key name, wire, TTL offsets (UInt16 each), CNAME names

    private static let initialRegion = 64 * 1024
    private static let initialSlots = 1024

    private var region: UnsafeMutableRawBufferPointer
    private var slots: UnsafeMutableBufferPointer<Slot>
    /// Where the next record goes.
    private var head = 0
    /// Where the oldest record starts.
    private var tail = 0
    /// Octets from tail to head, wrap padding included.
    private var used = 0
    /// The most the region may grow to.
    private let maximumRegion: Int

    /// Records in the index (live answers).
    private(set) var count = 0
    /// Wire and key-name octets of the live answers: what the cache's byte budget counts.
    private(set) var bytes = 0
    /// Octets of the live records, headers and padding to 8 included.
    private var recordBytes = 0

    /// A log that may grow to hold answers whose wire and names come to `byteBudget` (with each
    /// record's header and offsets on top, so twice that, plus room for one answer of the
    /// largest size); it starts at 64 KiB.
    init(byteBudget: Int) {
        maximumRegion = min(2 * max(byteBudget, 0) + 2 * Self.headerSize + 4 * 65_536, Int(UInt32.max) - 8) & ~7
        region = .allocate(byteCount: min(Self.initialRegion, maximumRegion), alignment: 8)
        slots = .allocate(capacity: Self.initialSlots)
        slots.initialize(repeating: .empty)
    }

    deinit {
        region.deallocate()
        slots.deallocate()
    }

    /// Bytes the log holds from the allocator: its region and its index.
    var footprint: Int { region.count + slots.count * MemoryLayout<Slot>.stride }

    // MARK: Finding

    /// The live record answering `key`, if any.
    func find(_ key: CacheKey) -> Found? {
        let hash = Self.hash(key)
        guard let slot = slotIndex(hash: hash, where: { self.matches(position: $0, key) }) else { return nil }
        let position = Int(slots[slot].position) - 1
        return Found(position: position, expiresAt: u64(position + Self.expiresAt), staleBase: u64(position + Self.staleBaseAt))
    }

    /// Copies the record at `position` into `parts`, reusing their buffers (no allocation once
    /// they are as large as the answers replayed).
    func copy(_ position: Int, into parts: inout AnswerParts) {
        let wireLength = Int(u16(position + Self.wireLengthAt))
        var offset = position + Self.headerSize + Int(region[position + Self.keyNameLengthAt])
        parts.wire.removeAll(keepingCapacity: true)
        parts.wire.append(contentsOf: UnsafeRawBufferPointer(rebasing: region[offset..<offset + wireLength]))
        offset += wireLength
        parts.ttlOffsets.removeAll(keepingCapacity: true)
        for _ in 0..<Int(u16(position + Self.ttlCountAt)) {
            parts.ttlOffsets.append(region.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            offset += 2
        }
        let cnameLength = Int(u32(position + Self.cnameLengthAt))
        parts.cnameNames.removeAll(keepingCapacity: true)
        parts.cnameNames.append(contentsOf: UnsafeRawBufferPointer(rebasing: region[offset..<offset + cnameLength]))
        parts.nameLength = Int(u16(position + Self.partsNameLengthAt))
        parts.questionEnd = Int(u16(position + Self.questionEndAt))
        parts.additionalStart = Int(u16(position + Self.additionalStartAt))
        parts.receivedAt = u64(position + Self.receivedAt)
        parts.isStale = region[position + Self.bitsAt] & 2 != 0
    }

    /// The record at `position` as an answer object (the rarer paths: serve-stale).
    func answer(at position: Int) -> CachedAnswer {
        var parts = AnswerParts()
        copy(position, into: &parts)
        let bits = region[position + Self.bitsAt]
        return CachedAnswer(
            parts: parts, rcode: DNSRcode(rawValue: UInt16(region[position + Self.rcodeAt])),
            naturalLifetime: u32(position + Self.lifetimeAt), isNegative: bits & 1 != 0)
    }

    // MARK: Storing and evicting

    /// Stores `answer` under `key`, replacing any record for it; evicts the oldest answers while
    /// more than `capacity` answers or `byteBudget` octets would be held. Returns false (nothing
    /// stored, the old record gone) when the answer alone is over the budget.
    @discardableResult
    func store(_ answer: CachedAnswer, key: CacheKey, expiresAt: UInt64, staleBase: UInt64, capacity: Int, byteBudget: Int) -> Bool {
        remove(key)
        let parts = answer.parts
        let answerBytes = parts.wire.count + key.name.count
        let length = (Self.headerSize + key.name.count + parts.wire.count + 2 * parts.ttlOffsets.count + parts.cnameNames.count + 7) & ~7
        guard answerBytes <= byteBudget, length <= maximumRegion, parts.wire.count <= 65535, key.name.count <= 255,
            parts.cnameNames.count <= Int(UInt32.max)
        else { return false }
        while count > 0, count >= capacity || bytes + answerBytes > byteBudget { evictOldest() }
        let position = reserve(length, capacity: capacity)

        let hash = Self.hash(key)
        put(UInt32(length), at: position + Self.lengthAt)
        put(hash, at: position + Self.hashAt)
        put(expiresAt, at: position + Self.expiresAt)
        put(staleBase, at: position + Self.staleBaseAt)
        put(parts.receivedAt, at: position + Self.receivedAt)
        put(answer.naturalLifetime, at: position + Self.lifetimeAt)
        put(UInt32(parts.cnameNames.count), at: position + Self.cnameLengthAt)
        put(UInt16(parts.wire.count), at: position + Self.wireLengthAt)
        put(UInt16(clamping: parts.questionEnd), at: position + Self.questionEndAt)
        put(UInt16(clamping: parts.additionalStart), at: position + Self.additionalStartAt)
        put(UInt16(parts.ttlOffsets.count), at: position + Self.ttlCountAt)
        put(key.type.rawValue, at: position + Self.typeAt)
        put(key.class.rawValue, at: position + Self.classAt)
        put(UInt16(clamping: parts.nameLength), at: position + Self.partsNameLengthAt)
        region[position + Self.keyNameLengthAt] = UInt8(key.name.count)
        region[position + Self.flagsAt] = key.flags
        region[position + Self.rcodeAt] = UInt8(truncatingIfNeeded: answer.rcode.rawValue)
        region[position + Self.bitsAt] = (answer.isNegative ? 1 : 0) | (parts.isStale ? 2 : 0)
        var offset = position + Self.headerSize
        offset = write(key.name, at: offset)
        offset = write(parts.wire[...], at: offset)
        for ttlOffset in parts.ttlOffsets {
            region.storeBytes(of: ttlOffset, toByteOffset: offset, as: UInt16.self)
            offset += 2
        }
        _ = write(parts.cnameNames[...], at: offset)

        insertSlot(hash: hash, position: position)
        count += 1
        bytes += answerBytes
        recordBytes += length
        return true
    }

    /// Drops the record answering `key`, if any (its octets are reclaimed when the tail passes).
    func remove(_ key: CacheKey) {
        let hash = Self.hash(key)
        guard let slot = slotIndex(hash: hash, where: { self.matches(position: $0, key) }) else { return }
        forget(slot: slot, position: Int(slots[slot].position) - 1)
    }

    /// Evicts the oldest live answer, and every replaced record before it.
    private func evictOldest() {
        while used > 0 {
            if advanceTail() { return }
        }
    }

    /// Moves the tail past the oldest record (or the wrap padding); says whether it was live.
    @discardableResult
    private func advanceTail() -> Bool {
        if tail == region.count || u32(tail + Self.lengthAt) == 0 {
            used -= region.count - tail
            tail = 0
            if used == 0 { head = 0 }
            return false
        }
        let length = Int(u32(tail + Self.lengthAt))
        let hash = u32(tail + Self.hashAt)
        let position = tail
        var wasLive = false
        if let slot = slotIndex(hash: hash, where: { $0 == position }) {
            forget(slot: slot, position: position)
            wasLive = true
        }
        used -= length
        tail += length
        if tail == region.count { tail = 0 }
        if used == 0 { (head, tail) = (0, 0) }
        return wasLive
    }

    /// Room for a record of `length` octets at the head: dead records at the tail are passed,
    /// the region grows while the live answers need it, and past its maximum the oldest go.
    private func reserve(_ length: Int, capacity: Int) -> Int {
        while true {
            if used == 0 { (head, tail) = (0, 0) }
            if used == 0 || head > tail {
                // Free: from the head to the end, then from the start to the tail.
                if region.count - head >= length { return commit(length) }
                if tail >= length {
                    // The rest of the region is padding the tail skips; the record goes first.
                    if head < region.count { put(UInt32(0), at: head + Self.lengthAt) }
                    used += region.count - head
                    head = 0
                    continue
                }
            } else if head < tail, tail - head >= length {
                return commit(length)
            }
            // Not enough room: pass replaced records at the tail; grow, or compact, while the live
            // answers need the room; past the region's maximum the oldest answer goes.
            if used > 0, !tailIsLive() {
                advanceTail()
            } else if region.count < maximumRegion || length > region.count || recordBytes + length <= region.count * 3 / 4 {
                grow(toHold: length, capacity: capacity)
            } else {
                evictOldest()
            }
        }
    }

    private func commit(_ length: Int) -> Int {
        let position = head
        head += length
        used += length
        return position
    }

    private func tailIsLive() -> Bool {
        if tail == region.count || u32(tail + Self.lengthAt) == 0 { return false }
        let position = tail
        return slotIndex(hash: u32(tail + Self.hashAt), where: { $0 == position }) != nil
    }

    /// The live records copied to the start of a region in order, replaced ones left behind, and
    /// the index rebuilt for their new positions. The region keeps its size while the live records
    /// and `length` fill at most three quarters of it, so each compaction frees at least a quarter
    /// and its copying is O(1) per octet stored. Otherwise it grows to half again what they need
    /// and, while the cache is still filling, to half again what `capacity` answers of the average
    /// size so far would need: the region reaches its working size while the cache fills, not in a
    /// step once it is full and evicting (which the soak would see as growth).
    private func grow(toHold length: Int, capacity: Int) {
        var live: [(position: Int, length: Int)] = []
        live.reserveCapacity(count)
        var liveBytes = 0
        var cursor = tail
        var left = used
        while left > 0 {
            if cursor == region.count || u32(cursor + Self.lengthAt) == 0 {
                left -= region.count - cursor
                cursor = 0
                continue
            }
            let recordLength = Int(u32(cursor + Self.lengthAt))
            let position = cursor
            if slotIndex(hash: u32(cursor + Self.hashAt), where: { $0 == position }) != nil {
                live.append((cursor, recordLength))
                liveBytes += recordLength
            }
            cursor += recordLength
            left -= recordLength
            if cursor == region.count { cursor = 0 }
        }
        var wanted = region.count
        if liveBytes + length > region.count * 3 / 4 {
            wanted = (liveBytes + length) * 3 / 2
            if count > 0, count < capacity {
                let projected = (liveBytes / count).multipliedReportingOverflow(by: capacity)
                if !projected.overflow { wanted = max(wanted, min(projected.partialValue, maximumRegion) * 3 / 2) }
            }
        }
        let size = min((wanted + 65_535) & ~65_535, max(maximumRegion, region.count))
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, liveBytes + length), alignment: 8)
        var offset = 0
        for record in live {
            grown.baseAddress!.advanced(by: offset).copyMemory(
                from: region.baseAddress!.advanced(by: record.position), byteCount: record.length)
            offset += record.length
        }
        region.deallocate()
        region = grown
        slots.update(repeating: .empty)
        count = 0
        offset = 0
        for record in live {
            insertSlot(hash: u32(offset + Self.hashAt), position: offset)
            count += 1
            offset += record.length
        }
        (tail, head, used) = (0, offset, offset)
    }

    // MARK: The index (linear probing, backward-shift deletion: no tombstones to pile up)

    private var mask: Int { slots.count - 1 }

    private func slotIndex(hash: UInt32, where matches: (Int) -> Bool) -> Int? {
        var index = Int(hash) & mask
        while slots[index].position != 0 {
            if slots[index].tag == hash, matches(Int(slots[index].position) - 1) { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    private func insertSlot(hash: UInt32, position: Int) {
        if (count + 1) * 2 > slots.count { growSlots() }
        var index = Int(hash) & mask
        while slots[index].position != 0 { index = (index + 1) & mask }
        slots[index] = Slot(tag: hash, position: UInt32(position + 1))
    }

    private func growSlots() {
        let old = slots
        slots = .allocate(capacity: old.count * 2)
        slots.initialize(repeating: .empty)
        for slot in old where slot.position != 0 {
            var index = Int(slot.tag) & mask
            while slots[index].position != 0 { index = (index + 1) & mask }
            slots[index] = slot
        }
        old.deallocate()
    }

    /// Empties `slot` (the record at `position` becomes dead) and shifts later slots of the same
    /// probe run back, so lookups never need tombstones.
    private func forget(slot: Int, position: Int) {
        count -= 1
        bytes -= Int(u16(position + Self.wireLengthAt)) + Int(region[position + Self.keyNameLengthAt])
        recordBytes -= Int(u32(position + Self.lengthAt))
        var hole = slot
        var next = slot
        while true {
            next = (next + 1) & mask
            if slots[next].position == 0 { break }
            let home = Int(slots[next].tag) & mask
            // Leave it where it is if its home lies cyclically in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if stays { continue }
            slots[hole] = slots[next]
            hole = next
        }
        slots[hole] = .empty
    }

    // MARK: Bytes

    private func matches(position: Int, _ key: CacheKey) -> Bool {
        guard Int(region[position + Self.keyNameLengthAt]) == key.name.count, region[position + Self.flagsAt] == key.flags,
            u16(position + Self.typeAt) == key.type.rawValue, u16(position + Self.classAt) == key.class.rawValue
        else { return false }
        let start = position + Self.headerSize
        return key.name.withUnsafeBytes { name in
            memcmp(name.baseAddress!, region.baseAddress!.advanced(by: start), name.count) == 0
        }
    }

    /// The key's hash, seeded per process (Swift's `Hasher`), so names chosen to collide in one
    /// process's table do not collide in another's.
    private static func hash(_ key: CacheKey) -> UInt32 {
        var hasher = Hasher()
        key.name.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(key.type.rawValue)
        hasher.combine(key.class.rawValue)
        hasher.combine(key.flags)
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }

    private func write(_ bytes: ArraySlice<UInt8>, at offset: Int) -> Int {
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { region.baseAddress!.advanced(by: offset).copyMemory(from: base, byteCount: source.count) }
        }
        return offset + bytes.count
    }

    private func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        region.storeBytes(of: value, toByteOffset: offset, as: T.self)
    }

    private func u64(_ offset: Int) -> UInt64 { region.load(fromByteOffset: offset, as: UInt64.self) }
    private func u32(_ offset: Int) -> UInt32 { region.load(fromByteOffset: offset, as: UInt32.self) }
    private func u16(_ offset: Int) -> UInt16 { region.load(fromByteOffset: offset, as: UInt16.self) }
}
