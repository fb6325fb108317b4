#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Hands the pages of a large region that is about to be freed back to the kernel a step at a
/// time, each step its own `madvise(MADV_DONTNEED)` call, so that the `free`/`munmap` that follows
/// finds nothing left to free.
///
/// Why (SPEC §9.10: a list refresh never stalls answers): this kernel is `PREEMPT_NONE`, so a
/// thread inside a system call keeps its core until the call returns to user space, whatever its
/// scheduling class. Freeing a 30 MB buffer is one `munmap` that frees every page in one call: a
/// `perf sched` trace of a 1,000,000-name refresh ended 2.8 ms waits of the event loop there, and
/// `bench/wakeup.sh` woke a thread 549–561 µs late (p99) beside a `SCHED_IDLE` neighbour freeing
/// 64 MiB in one go, against 34–48 µs when the neighbour handed its pages back in 256 KiB–1 MiB
/// `madvise` steps first. Each step's return to user space is where a woken loop gets the core.
///
/// Only for private anonymous memory (the heap, `mmap(MAP_ANONYMOUS)`) that nothing will read
/// again: afterwards its whole pages read as zero. Never call it on memory another owner may still
/// read (a shared copy-on-write buffer): names would vanish from a list (fail open).
public enum PageRelease {
    /// Bytes per step: 256 KiB, the small end of what `bench/wakeup.sh` measured (64 small pages).
    public static let step = 256 << 10

    /// The kernel's page size (4 KiB on x86-64, up to 64 KiB on some arm64 kernels).
    public static let pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)

    /// `madvise` calls made by this process so far (for tests: whether a path steps at all).
    static let stepsTaken = Atomic<Int>(0)

    /// Discards the whole pages inside the `bytes` bytes at `base`, in steps that end on multiples
    /// of `step` (a power of two, at least a page) in the address space. The bytes before the first
    /// page boundary and after the last one are left as they are, since the allocator may keep its
    /// own records there; every byte in between reads as zero afterwards.
    /// - Returns: how many `madvise` calls it made (for tests).
    @discardableResult
    public static func discard(_ base: UnsafeMutableRawPointer, bytes: Int, step: Int = step) -> Int {
        precondition(step >= pageSize && step & (step - 1) == 0, "a step is a power of two of at least a page")
        guard bytes > 0 else { return 0 }
        let start = UInt(bitPattern: base)
        let page = UInt(pageSize)
        var from = (start + page - 1) & ~(page - 1)
        let end = (start + UInt(bytes)) & ~(page - 1)
        var calls = 0
        while from < end {
            // The next multiple of `step`, so that a 2 MiB step never splits a huge page.
            let to = min(end, (from | UInt(step - 1)) + 1)
            _ = madvise(UnsafeMutableRawPointer(bitPattern: from), Int(to - from), MADV_DONTNEED)
            calls += 1
            stepsTaken.add(1, ordering: .relaxed)
            from = to
        }
        return calls
    }

    /// Frees memory from `malloc`/`realloc` of `bytes` bytes, handing its pages back in steps
    /// first when it is large enough for that to matter (at least one step).
    static func free(_ base: UnsafeMutableRawPointer?, bytes: Int) {
        guard let base else { return }
        if bytes >= step { discard(base, bytes: bytes) }
        releaseToAllocator(base)
    }

    /// Empties `array`, handing its pages back in steps first when they are many. Call it where
    /// the array's storage is about to be freed anyway (a builder's scratch arrays), and only when
    /// no other copy shares that storage (`MatcherBuilder` checks that its value is the only copy):
    /// if one does after all, the copy-on-write of `withUnsafeMutableBytes` gives this array its
    /// own storage first, so the other copy's elements are never touched, at the cost of a copy.
    static func release<T: BitwiseCopyable>(_ array: inout [T]) {
        var taken: [T] = []
        swap(&taken, &array)
        guard taken.count * MemoryLayout<T>.stride >= step else { return }
        taken.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { discard(base, bytes: raw.count) }
        }
    }
}

/// The C library's `free`, under a name the `PageRelease.free` above does not hide.
private func releaseToAllocator(_ base: UnsafeMutableRawPointer) { free(base) }
