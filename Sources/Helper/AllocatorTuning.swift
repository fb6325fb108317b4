#if canImport(Glibc)
import Glibc
#endif

/// glibc malloc settings the helper sets for itself first thing in `main`, before its threads
/// exist (SPEC §9, docs/benchmarks.md "Soak: memory over many forwarded names"). Measured with
/// `bench/soak.sh` with the cache full and evicting (TTL 3600, 100,000 answers), where glibc's
/// bytes in use stay at 62 MiB and everything else is what it keeps free.
///
/// Not set: **two arenas (M_ARENA_MAX 2)**. Measured: the same binary held 10–20 MiB less over
/// the first 2 M names, but a 10 M run with it set here still crept, to 143 MiB at 7.6 M names
/// against 141 MiB with glibc's default arenas (docs/benchmarks.md "Soak"), so it bounds nothing and would
/// only make more event loops share two arenas' locks.
///
/// **A fixed mmap threshold (128 KiB, glibc's own starting value).** By default glibc raises
/// its mmap threshold to the size of any mmap'd block that is freed (up to 32 MiB, malloc(3)
/// "M_MMAP_THRESHOLD"). The helper frees such blocks: the answer cache's log and index as they
/// grow, the domain matcher's arrays at every list build. From then on blocks of several MiB came
/// from an arena, where small long-lived blocks stored around them kept the space from being given
/// back or reused: RSS stepped by ~12 MiB (+15.3% over 600k names with the cache full; +8.5%, in
/// smaller steps, with the threshold fixed by `MALLOC_MMAP_THRESHOLD_`, same binary; the cache
/// now keeps its answers in one region, `AnswerLog`, not a block each). Fixed, every block of 128 KiB
/// or more is mmap'd on its own and unmapped when freed. It also fixes the trim threshold. The same
/// holds for the list parse and matcher build buffers (tens of MB, grown by doubling): they go
/// back to the kernel when freed instead of staying resident until a `malloc_trim` (SPEC §9).
///
/// An administrator's own setting wins: a `MALLOC_MMAP_THRESHOLD_`, or a `GLIBC_TUNABLES` naming
/// `mmap_threshold`, in the environment leaves it as it is.
public enum AllocatorTuning {
    public enum Setting: Sendable, Equatable {
        case mmapThreshold(Int32)
    }

    /// What the helper sets, with the environment variable and tunable that override each.
    static let settings: [(setting: Setting, parameter: Int32, variable: String, tunable: String)] = [
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
