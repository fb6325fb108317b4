#if canImport(Glibc)
import Glibc
#endif
import ServiceLifecycle

/// Hands the memory glibc keeps after it was freed back to the kernel, every `interval`.
///
/// Forwarding allocates and frees a few small blocks per exchange on every event loop. glibc keeps
/// freed blocks in its arenas, and the free pages between live blocks stay resident: over 1 M
/// forwarded names RSS rose 21% while the live heap stayed at 9–15 MiB (README "Soak"). Fewer
/// arenas (M_ARENA_MAX) made it worse and a lower M_TRIM_THRESHOLD only trims the top of the main
/// heap, so neither helped; `malloc_trim(0)` also releases whole free pages inside every arena
/// (madvise). Measured with bench/soak.sh over 3 M names, same binary with and without it (a
/// preloaded no-op `malloc_trim`): 65.0 → 88.2 MiB against 75.4 → 100.0 MiB, about 12 MiB less
/// throughout, though the slow creep (~8 bytes a query) is there either way. It takes each
/// arena's lock for well under a millisecond at this heap size, so once every 30 s costs nothing
/// a client could notice.
struct MemoryTrimService: Service {
    var interval: Duration = .seconds(30)

    /// glibc's `malloc_trim`, looked up at run time: Swift's Glibc module does not export
    /// <malloc.h>, and on another C library the trim is simply skipped.
    static let trim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// glibc's `mallopt`, looked up like `trim`.
    static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "mallopt") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// Blocks of at least this size get mappings of their own (glibc's default before it adapts).
    static let mmapThreshold: Int32 = 128 << 10

    /// Call once at start, before large lists are parsed: every block of 128 KiB or more gets a
    /// mapping of its own, returned to the kernel the moment it is freed (issue 15).
    ///
    /// Why: glibc starts at this threshold but raises it to the size of every mapped block freed,
    /// up to 32 MiB, so after the first list parse the arrays of the next parse and matcher build
    /// (tens of MB, grown by doubling) came from the heap, and their freed blocks stayed resident
    /// until a `malloc_trim`, which then walks them holding the arena's lock while an event loop
    /// may be waiting for it. Setting the threshold explicitly turns that adaptation off
    /// (mallopt(3), M_MMAP_THRESHOLD). The DNS path allocates no block this large.
    static func configureAllocator() {
        // M_MMAP_THRESHOLD is -3 in <malloc.h>, which Swift's Glibc module does not export.
        _ = mallopt?(-3, mmapThreshold)
    }

    /// Trims once, now (after a large matcher build). A plain function, so callers inline no
    /// optional C function pointer.
    @inline(never)
    static func trimNow() {
        if let trim { _ = trim(0) }
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                _ = Self.trim?(0)
            }
        }
    }
}
