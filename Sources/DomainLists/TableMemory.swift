#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory for the matcher's large tables, backed by transparent huge pages where the kernel
/// offers them (`madvise` mode is Debian's default).
///
/// Why: a lookup touches two or three random places in tens of megabytes. With 4 KiB pages each
/// one also misses the TLB, and under a hypervisor that page walk costs about as much as the
/// cache miss itself. 2 MiB pages cut the page-table entries by 512 and most of those walks go away.
/// Small tables (under 2 MiB) use the ordinary allocator.
enum TableMemory {
    static let hugePage = 2 << 20

    /// A fixed-size table. `base` is valid even when `count` is 0 (one element is always reserved),
    /// so readers need no optional checks.
    struct Buffer<T> {
        let base: UnsafeMutablePointer<T>
        let count: Int
        /// Whether the memory came from `mmap`, and how many bytes were mapped.
        fileprivate let mappedBytes: Int

        @inline(__always)
        subscript(index: Int) -> T {
            get { base[index] }
            nonmutating set { base[index] = newValue }
        }
    }

    /// Zero-filled memory for `count` values of `T` (a trivial type), aligned to at least 16 bytes.
    static func allocate<T>(_ type: T.Type, count: Int) -> Buffer<T> {
        let bytes = max(count, 1) * MemoryLayout<T>.stride
        if bytes >= hugePage, let mapped = mapHugePages(bytes) {
            // Anonymous mappings are already zero.
            return Buffer(base: mapped.bindMemory(to: T.self, capacity: count), count: count, mappedBytes: pageRounded(bytes))
        }
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        return Buffer(base: raw.bindMemory(to: T.self, capacity: max(count, 1)), count: count, mappedBytes: 0)
    }

    /// Frees memory from `allocate`, its pages handed back in steps first (`PageRelease`), so the
    /// `munmap` or `free` that ends it finds nothing left to free: a 1,000,000-name matcher's
    /// tables are about 30 MB, and one call freeing them kept a woken event loop off its core for
    /// milliseconds on a `PREEMPT_NONE` kernel (SPEC §9.10).
    ///
    /// A mapped table starts on a 2 MiB boundary and asked for huge pages: its whole 2 MiB ranges
    /// go in 2 MiB steps on those boundaries, so each step frees a huge page whole rather than
    /// splitting it into 512 small ones first; the tail, small pages, goes in the usual steps.
    static func deallocate<T>(_ buffer: Buffer<T>) {
        let raw = UnsafeMutableRawPointer(buffer.base)
        if buffer.mappedBytes > 0 {
            let whole = buffer.mappedBytes / hugePage * hugePage
            PageRelease.discard(raw, bytes: whole, step: hugePage)
            PageRelease.discard(raw + whole, bytes: buffer.mappedBytes - whole)
            munmap(buffer.base, buffer.mappedBytes)
        } else {
            let bytes = max(buffer.count, 1) * MemoryLayout<T>.stride
            if bytes >= PageRelease.step { PageRelease.discard(raw, bytes: bytes) }
            raw.deallocate()
        }
    }

    /// The kernel's page size (4 KiB on x86-64, up to 64 KiB on some arm64 kernels).
    static let smallPage = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)

    private static func pageRounded(_ bytes: Int) -> Int { (bytes + smallPage - 1) / smallPage * smallPage }

    /// Maps `bytes` rounded up to whole small pages, starting on a 2 MiB boundary, and asks for
    /// huge pages. Nil if the kernel refuses the mapping.
    ///
    /// The length is not rounded up to a whole huge page: the kernel backs only the 2 MiB ranges
    /// that lie wholly inside the mapping with huge pages and the tail with small ones, so a
    /// 6.1 MiB table is resident as 6.1 MiB, not 8 (measured: up to 2 MiB less per table, about
    /// 7 bytes per name at 200,000 names).
    private static func mapHugePages(_ bytes: Int) -> UnsafeMutableRawPointer? {
        let length = pageRounded(bytes)
        // One huge page more than needed, so that the start can move to a 2 MiB boundary; the
        // slack before and after is unmapped at once.
        guard let mapped = mmap(nil, length + hugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapped != MAP_FAILED else { return nil }
        let address = UInt(bitPattern: mapped)
        let head = Int((UInt(hugePage) - address % UInt(hugePage)) % UInt(hugePage))
        if head > 0 { munmap(mapped, head) }
        let tail = hugePage - head
        if tail > 0 { munmap(mapped + head + length, tail) }
        let start = mapped + head
        _ = madvise(start, length, MADV_HUGEPAGE)
        return start
    }
}
