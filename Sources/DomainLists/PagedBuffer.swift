#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable run of trivial values in memory of its own, whose pages go back to the kernel in
/// steps when it is freed (`PageRelease`), instead of in the one `munmap` a Swift array's storage
/// gets: a parse's storage is tens of MB at 1,000,000 names (SPEC §9.10).
///
/// Non-copyable, so exactly one owner frees it: `deinit` runs once, when that owner goes. Types
/// that share one (`RuleList`'s storage class) copy it before they write.
///
/// Growth is by `realloc`: the helper has glibc serve every block of 128 KiB or more from its own
/// mapping (`AllocatorTuning`), and glibc grows such a block with `mremap`, which moves the
/// mapping without copying its bytes or freeing its pages.
struct PagedBuffer<Element: BitwiseCopyable>: ~Copyable {
    private(set) var base: UnsafeMutablePointer<Element>?
    private(set) var count = 0
    private(set) var capacity = 0

    init() {}

    /// `count` zero values.
    init(zeroed count: Int) {
        if count > 0 {
            base = calloc(count, MemoryLayout<Element>.stride)?.assumingMemoryBound(to: Element.self)
            precondition(base != nil, "out of memory for \(count) values")
        }
        self.count = count
        capacity = count
    }

    deinit {
        PageRelease.free(base.map(UnsafeMutableRawPointer.init), bytes: capacity * MemoryLayout<Element>.stride)
    }

    /// A buffer of its own with the same values (and at least the same capacity).
    func copy() -> PagedBuffer<Element> {
        var other = PagedBuffer<Element>()
        other.reserve(capacity)
        if let base, count > 0 { other.base!.update(from: base, count: count) }
        other.count = count
        return other
    }

    @inline(__always)
    subscript(index: Int) -> Element {
        get { base![index] }
        set { base![index] = newValue }
    }

    /// The values, for reading without a copy; an empty buffer for no storage.
    @inline(__always)
    var values: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }

    /// Room for `wanted` values in all.
    mutating func reserve(_ wanted: Int) {
        guard wanted > capacity else { return }
        let bytes = wanted * MemoryLayout<Element>.stride
        guard let grown = realloc(base, bytes) else { preconditionFailure("out of memory for \(bytes) bytes") }
        base = grown.assumingMemoryBound(to: Element.self)
        capacity = wanted
    }

    /// Room for `more` values beyond `count`, at least doubling, so appends cost amortized O(1).
    @inline(__always)
    mutating func reserveMore(_ more: Int) {
        if count + more > capacity { reserve(max(count + more, capacity * 2, 16)) }
    }

    @inline(__always)
    mutating func append(_ value: Element) {
        reserveMore(1)
        base![count] = value
        count += 1
    }

    mutating func append(contentsOf values: UnsafeBufferPointer<Element>) {
        guard let from = values.baseAddress, !values.isEmpty else { return }
        reserveMore(values.count)
        (base! + count).update(from: from, count: values.count)
        count += values.count
    }

    /// Keeps the first `newCount` values (the capacity stays).
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count, "truncating within the buffer")
        count = newCount
    }
}
