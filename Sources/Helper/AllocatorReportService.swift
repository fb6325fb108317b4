#if canImport(Glibc)
import Glibc
#endif
import ServiceLifecycle
import UnixSignals

/// On SIGUSR2, writes glibc's own account of the heap to standard error (the journal under
/// systemd): `malloc_info(3)`'s XML, one `<heap>` per arena, then the totals. A debugging
/// aid for memory questions (SPEC §9, docs/benchmarks.md "Soak"): it tells memory in use from memory glibc
/// holds free, per arena, which RSS alone cannot. Nothing runs until the signal arrives; without
/// it the helper only waits on the signal source.
///
///     kill -USR2 $(pidof scrolloff-dns)
struct AllocatorReportService: Service {
    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigusr2)
        for await _ in signals.cancelOnGracefulShutdown() {
            AllocatorReport.write()
        }
    }
}

/// glibc's `malloc_info`, looked up at run time: Swift's Glibc module does not export
/// <malloc.h>, and on another C library there is nothing to report.
enum AllocatorReport {
    #if canImport(Glibc)
    static let mallocInfo: (@convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_info") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32).self)
    }()
    #endif

    /// The XML to standard error. The whole-process totals come after the last `</heap>`:
    /// `<total type="fast"|"rest">` is what the arenas hold free, `<system type="current">` what
    /// they took from the kernel, `<total type="mmap">` the blocks mmap'd on their own
    /// (bench/soak.sh reads them).
    static func write() {
        #if canImport(Glibc)
        // A stream of its own on a copy of descriptor 2: the C `stderr` global is shared mutable
        // state to Swift 6, and closing the copy leaves the helper's standard error open.
        guard let mallocInfo, let stream = fdopen(dup(2), "w") else { return }
        _ = mallocInfo(0, stream)
        fclose(stream)
        #endif
    }
}
