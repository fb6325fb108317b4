/// The answer cache's insertion order, oldest first: a ring of (key, serial) pairs allocated once
/// for the cache's capacity and never grown, copied or rebuilt.
///
/// Why a fixed ring and not an array appended to and filtered: at the default capacity (100,000
/// answers) that array was a 5–13 MiB block, reallocated as it grew and rebuilt by `filter`
/// every ~100,000 stored answers. Once glibc has freed an mmap'd block that large it raises its
/// mmap threshold above it (the dynamic threshold of malloc(3)), so the next copies came from the
/// event loop's arena, where the small answers stored around them kept the space from being
/// reused or trimmed: with the cache full and evicting (bench/soak.sh, TTL 3600), glibc's free
/// lists stepped 11 → 16 → 28 → 17 → 29 MiB and median RSS rose 15% over 600,000 names while the
/// bytes in use stayed at 79 MiB (README "Soak").
struct EvictionOrder {
    typealias Pair = (key: CacheKey, serial: UInt64)

    private var slots: [Pair]
    /// Index of the oldest pair.
    private var head = 0
    /// Pairs held, live or stale (a key stored again has a newer pair; the older one is skipped).
    private(set) var count = 0

    /// A ring that never holds more than `slots` pairs (its whole memory, allocated now).
    init(slots: Int) {
        self.slots = Array(repeating: Self.empty, count: max(slots, 1))
    }

    /// The pairs the ring holds at most.
    var capacity: Int { slots.count }

    var isFull: Bool { count == slots.count }

    /// A free slot: no name bytes, so a popped key's buffer is released at once.
    private static let empty: Pair = (CacheKey(name: [], type: .a, class: .in, flags: 0), 0)

    /// Adds the newest pair. The caller compacts first when the ring is full.
    mutating func append(_ key: CacheKey, serial: UInt64) {
        precondition(!isFull, "EvictionOrder is full: compact before appending")
        slots[index(count)] = (key, serial)
        count += 1
    }

    /// Takes the oldest pair out, or nil when there is none.
    mutating func popOldest() -> Pair? {
        guard count > 0 else { return nil }
        let pair = slots[head]
        slots[head] = Self.empty
        head = index(1)
        count -= 1
        return pair
    }

    /// Keeps, in order and in place, only the pairs `isLive` accepts; the others' slots are
    /// emptied (their key buffers released). Allocates nothing.
    mutating func compact(keeping isLive: (Pair) -> Bool) {
        var kept = 0
        for offset in 0..<count {
            let from = index(offset)
            let pair = slots[from]
            slots[from] = Self.empty
            if isLive(pair) {
                slots[index(kept)] = pair
                kept += 1
            }
        }
        count = kept
    }

    @inline(__always) private func index(_ offset: Int) -> Int {
        let position = head + offset
        return position < slots.count ? position : position - slots.count
    }
}
