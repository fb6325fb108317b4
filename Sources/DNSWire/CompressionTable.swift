/// Suffix hash → offset where that name suffix was written, for RFC 1035 §4.1.4 compression.
///
/// Open addressing over a small fixed table: the writer has already hashed the suffix, so a
/// lookup costs a few comparisons instead of a second (SipHash) hash as a `Dictionary` would.
/// Slots in use are listed so `removeAll` costs only what was used, and the arrays keep their
/// capacity, so a reused writer does not allocate.
struct CompressionTable: Sendable {
    /// Power of two; three quarters of it may fill, which keeps probe runs short.
    private static let slotCount = 256
    static let maxEntries = 192

    private var keys: [UInt64] = []
    private var offsets: [UInt16] = []
    private var used: [Int] = []

    var count: Int { used.count }

    /// 0 marks an empty slot, so a real hash of 0 is stored as 1; a wrong match costs only a
    /// failed verification in the writer, never a wrong pointer.
    @inline(__always) private static func key(_ hash: UInt64) -> UInt64 { hash == 0 ? 1 : hash }

    @inline(__always) private static func slot(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: key ^ key >> 29) & (slotCount - 1)
    }

    func lookup(_ hash: UInt64) -> UInt16? {
        guard !used.isEmpty else { return nil }
        let key = Self.key(hash)
        var index = Self.slot(key)
        while true {
            let found = keys[index]
            if found == key { return offsets[index] }
            if found == 0 { return nil }
            index = (index + 1) & (Self.slotCount - 1)
        }
    }

    /// Keeps the first offset for a suffix: the earliest copy is the one every later name can use.
    mutating func insertIfAbsent(_ hash: UInt64, offset: UInt16) {
        guard used.count < Self.maxEntries else { return }
        if keys.isEmpty {
            keys = Array(repeating: 0, count: Self.slotCount)
            offsets = Array(repeating: 0, count: Self.slotCount)
            used.reserveCapacity(Self.maxEntries)
        }
        let key = Self.key(hash)
        var index = Self.slot(key)
        while true {
            let found = keys[index]
            if found == key { return }
            if found == 0 { break }
            index = (index + 1) & (Self.slotCount - 1)
        }
        keys[index] = key
        offsets[index] = offset
        used.append(index)
    }

    mutating func removeAll() {
        for index in used { keys[index] = 0 }
        used.removeAll(keepingCapacity: true)
    }

    /// Forgets every entry at or after `limit`, for a writer cut back by truncation.
    mutating func removeEntries(atOrAfter limit: Int) {
        let kept = used.compactMap { index in Int(offsets[index]) < limit ? (keys[index], offsets[index]) : nil }
        removeAll()
        for (key, offset) in kept { insertIfAbsent(key, offset: offset) }
    }
}
