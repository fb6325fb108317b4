/// Hashes of name suffixes, extended one label at a time from the right: the hash of
/// `www.example.com` is `extend(extend(extend(root, "com"), "example"), "www")`.
///
/// The builder and the lookup share this code so that they agree bit for bit (the hash is never
/// stored outside the process, so native byte order is fine). Because a suffix's hash depends only
/// on the query's bytes, not on which trie node the previous label found, the lookup knows every
/// slot it will probe before the first probe returns, and the processor overlaps their cache
/// misses. Labels are read eight bytes at a time and lowercased with SWAR arithmetic; each word is
/// mixed with a multiply, and the MurmurHash3 `fmix64` finalizer makes the low bits, which pick the
/// slot, depend on every byte.
enum SuffixHash {
    static let root: UInt64 = 0x5CA0_110F_F0D1_5E00

    @inline(__always)
    static func extend(_ suffix: UInt64, label: UnsafePointer<UInt8>, count: Int) -> UInt64 {
        // The length goes in first, so that "a" and "a\0" differ.
        var h = suffix ^ (UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15)
        let raw = UnsafeRawPointer(label)
        var offset = 0
        while offset &+ 8 <= count {
            h = mix(h ^ lowercasedWord(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset &+= 8
        }
        if offset < count {
            // The last 1…7 bytes, one at a time, so that no read goes past the label's buffer.
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < count {
                tail |= UInt64(DomainNormalizer.lowercased(label[offset])) << shift
                shift &+= 8
                offset &+= 1
            }
            h = mix(h ^ tail)
        }
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        let h = value &* 0x9E37_79B9_7F4A_7C15
        return h ^ (h >> 29)
    }

    /// ASCII `A`…`Z` to lowercase in all eight bytes at once; other bytes unchanged.
    @inline(__always)
    static func lowercasedWord(_ word: UInt64) -> UInt64 {
        let low7 = word & 0x7F7F_7F7F_7F7F_7F7F
        // High bit of each byte: set when the byte is at least 'A' (0x41), and when above 'Z' (0x5A).
        let atLeastA = low7 &+ 0x3F3F_3F3F_3F3F_3F3F
        let aboveZ = low7 &+ 0x2525_2525_2525_2525
        let isUpper = atLeastA & ~aboveZ & ~word & 0x8080_8080_8080_8080
        return word | (isUpper >> 2)
    }
}
