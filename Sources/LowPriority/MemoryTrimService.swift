#if canImport(Glibc)
import Glibc
#endif
import ServiceLifecycle

/// Hands the memory glibc keeps after it was freed back to the kernel, every `interval`.
///
/// Forwarding allocates and frees a few small blocks per exchange on every event loop. glibc keeps
/// freed blocks in its arenas, and the free pages between live blocks stay resident: over 1 M
/// forwarded names RSS rose 21% while the live heap stayed at 9–15 MiB (docs/benchmarks.md "Soak"). Fewer
/// arenas (M_ARENA_MAX) made it worse and a lower M_TRIM_THRESHOLD only trims the top of the main
/// heap, so neither helped; `malloc_trim(0)` also releases whole free pages inside every arena
/// (madvise). Measured with bench/soak.sh over 3 M names, same binary with and without it (a
/// preloaded no-op `malloc_trim`): 65.0 → 88.2 MiB against 75.4 → 100.0 MiB, about 12 MiB less
/// throughout, though the slow creep (~8 bytes a query) is there either way. It takes each
/// arena's lock for well under a millisecond at this heap size, so once every 30 s costs nothing
/// a client could notice.
package struct MemoryTrimService: Service {
    package var interval: Duration = .seconds(30)

    package init(interval: Duration = .seconds(30)) { self.interval = interval }

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

    /// Trims once, now (after a large matcher build). A plain function, so callers inline no
    /// optional C function pointer.
    @inline(never)
    package static func trimNow() {
        if let trim { _ = trim(0) }
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                _ = Self.trim?(0)
            }
        }
    }
}
