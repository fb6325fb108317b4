#if canImport(Glibc)
import Glibc
#endif

/// Reads the counter of bench/alloc_count.c when the benchmark runs under it (LD_PRELOAD);
/// nil otherwise, so a missing preload is reported rather than read as "no allocations".
enum AllocationCounter {
    typealias CountFunction = @convention(c) () -> UInt64

    static let read: CountFunction? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "scrolloff_alloc_count") else { return nil }
        return unsafeBitCast(symbol, to: CountFunction.self)
    }()
}

/// Monotonic nanoseconds for timing the loop (benchmarks may read the clock; the core may not).
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
