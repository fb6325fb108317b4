#if canImport(Glibc)
import Glibc
#endif

/// glibc malloc settings the helper sets for itself first thing in `main`, before its threads
/// exist (issue 11, README "Soak: memory over many forwarded names"). Measured with
/// `bench/soak.sh` with the cache full and evicting (TTL 3600, 100,000 answers), where glibc's
/// bytes in use stay at 62 MiB and everything else is what it keeps free:
///
/// **At most two arenas (M_ARENA_MAX).** With glibc's default (eight per core) the event loop's
/// arena kept growing: held free 24 → 53 MiB and median RSS 128.8 → 140.7 MiB (+9.3%) over 10 M
/// names. With two, in the same conditions, held free stayed at 14.3–14.7 MiB and median RSS at
/// 118.6–120.9 MiB from 600k to 2.1 M names (−1.9%). The helper's allocations are small and its threads
/// few (one event loop per core, the concurrency pool), so sharing two arenas costs no lock wait
/// a client could see, and a freed block is reused by whichever thread allocates next instead of
/// waiting in the one arena of the thread that made it.
///
/// **A fixed mmap threshold (128 KiB, glibc's own starting value).** By default glibc raises
/// its mmap threshold to the size of any mmap'd block that is freed (up to 32 MiB, malloc(3)
/// "M_MMAP_THRESHOLD"). The helper frees such blocks: the answer cache's table as it grows, the
/// domain matcher's arrays at every list build. From then on blocks of several MiB came from an
/// arena, where the small long-lived answers stored around them kept the space from being given
/// back or reused: RSS stepped by ~12 MiB (+15.3% over 600k names with the cache full; +8.5%, in
/// smaller steps, with the threshold fixed by `MALLOC_MMAP_THRESHOLD_`, same binary; the cache's
/// eviction order no longer reallocates at all, `EvictionOrder`). Fixed, every block of 128 KiB
/// or more is mmap'd on its own and unmapped when freed. It also fixes the trim threshold.
///
/// An administrator's own setting wins: a `MALLOC_ARENA_MAX` or `MALLOC_MMAP_THRESHOLD_`, or a
/// `GLIBC_TUNABLES` naming `arena_max` or `mmap_threshold`, in the environment leaves that one as
/// it is.
public enum AllocatorTuning {
    public enum Setting: Sendable, Equatable {
        case arenaMax(Int32)
        case mmapThreshold(Int32)
    }

    /// What the helper sets, with the environment variable and tunable that override each.
    static let settings: [(setting: Setting, parameter: Int32, variable: String, tunable: String)] = [
        (.arenaMax(2), -8, "MALLOC_ARENA_MAX", "arena_max"),  // M_ARENA_MAX
        (.mmapThreshold(128 * 1024), -3, "MALLOC_MMAP_THRESHOLD_", "mmap_threshold"),  // M_MMAP_THRESHOLD
    ]

    /// Applies the settings the environment does not set itself; returns those applied (none
    /// off glibc).
    @discardableResult
    public static func apply(environment: [String: String]) -> [Setting] {
        guard let mallopt = Self.mallopt else { return [] }
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        var applied: [Setting] = []
        for entry in settings where environment[entry.variable] == nil && !tunables.contains(entry.tunable) {
            let value: Int32
            switch entry.setting {
            case .arenaMax(let count): value = count
            case .mmapThreshold(let bytes): value = bytes
            }
            if mallopt(entry.parameter, value) == 1 { applied.append(entry.setting) }
        }
        return applied
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
