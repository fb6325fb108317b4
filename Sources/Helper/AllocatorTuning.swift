#if canImport(Glibc)
import Glibc
#endif

/// glibc malloc settings the helper sets for itself at start, before its threads exist
/// (issue 11, README "Soak: memory over many forwarded names").
///
/// **A fixed mmap threshold (128 KiB, glibc's own starting value).** By default glibc raises
/// its mmap threshold to the size of any mmap'd block that is freed (up to 32 MiB, malloc(3)
/// "M_MMAP_THRESHOLD"). The helper frees such blocks: the answer cache's table as it grows, the
/// domain matcher's arrays at every list build. From then on every block below that size —
/// tables of several MiB — came from the event loop's arena, where the small long-lived
/// answers stored around it kept the space from being given back or reused, so the arena's
/// free lists grew in ~12 MiB steps (median RSS +15 to +24% over 600,000 names with the cache
/// full). Fixed, every block of 128 KiB or more is mmap'd on its own and unmapped when freed,
/// whatever was freed before. Setting it also fixes the trim threshold at its 128 KiB default.
///
/// An administrator's own setting wins: with `MALLOC_MMAP_THRESHOLD_` or a `GLIBC_TUNABLES`
/// that names `mmap_threshold` in the environment nothing is changed.
enum AllocatorTuning {
    /// malloc.h's M_MMAP_THRESHOLD.
    static let mmapThresholdParameter: Int32 = -3
    static let mmapThreshold: Int32 = 128 * 1024

    /// Applies the settings once; returns whether the threshold was set (false off glibc, or when
    /// the environment sets it).
    @discardableResult
    static func apply(environment: [String: String]) -> Bool {
        if environment["MALLOC_MMAP_THRESHOLD_"] != nil { return false }
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("mmap_threshold") { return false }
        guard let mallopt = Self.mallopt else { return false }
        return mallopt(mmapThresholdParameter, mmapThreshold) == 1
    }

    /// glibc's `mallopt`, looked up at run time: Swift's Glibc module does not export <malloc.h>,
    /// and another C library has its own allocator (nothing to set).
    static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "mallopt") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        #else
        return nil
        #endif
    }()
}
