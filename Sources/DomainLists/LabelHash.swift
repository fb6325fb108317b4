/// Hashes of name suffixes, extended one label at a time from the right: the hash of
/// `www.example.com` is `extend(extend(extend(root, "com"), "example"), "www")`.
///
/// The builder and the lookup share this code so that they agree bit for bit. Because a suffix's
/// hash depends only on the query's bytes (not on which trie node the previous label found), the
/// lookup knows every slot it will probe before the first probe returns, and the processor
/// overlaps their cache misses. FNV-1a over the lowercased bytes, then the MurmurHash3 `fmix64`
/// finalizer so that the low bits, which pick the slot, depend on every byte.
enum SuffixHash {
    static let root: UInt64 = 0x5CA0_11_0FF0_D15E

    @inline(__always)
    static func extend(_ suffix: UInt64, label: UnsafePointer<UInt8>, count: Int) -> UInt64 {
        var h = (suffix ^ 0xCBF2_9CE4_8422_2325) &* 0x0000_0100_0000_01B3
        var index = 0
        while index < count {
            h = (h ^ UInt64(DomainNormalizer.lowercased(label[index]))) &* 0x0000_0100_0000_01B3
            index &+= 1
        }
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}
