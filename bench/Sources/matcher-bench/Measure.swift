#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// CPU seconds of the calling thread: excludes time spent descheduled, which on a shared
/// two-core machine would otherwise dominate the figures.
func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Wall and thread-CPU time of `body`.
func timed<R>(_ body: () -> R) -> (result: R, wall: Double, cpu: Double) {
    let wall = monotonicSeconds()
    let cpu = threadCPUSeconds()
    let result = body()
    return (result, monotonicSeconds() - wall, threadCPUSeconds() - cpu)
}

/// Resident set size from /proc/self/statm (second field, in pages).
func residentBytes() -> Int {
    let descriptor = open("/proc/self/statm", O_RDONLY)
    guard descriptor >= 0 else { return -1 }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 127) }
    guard got > 0 else { return -1 }
    let fields = buffer[0..<got].split(separator: UInt8(ascii: " "))
    guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return -1 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Anonymous memory backed by transparent huge pages (`AnonHugePages` in /proc/self/smaps_rollup).
func anonHugePageBytes() -> Int {
    let descriptor = open("/proc/self/smaps_rollup", O_RDONLY)
    guard descriptor >= 0 else { return -1 }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 4095) }
    guard got > 0 else { return -1 }
    for line in String(decoding: buffer[0..<got], as: UTF8.self).split(separator: "\n") where line.hasPrefix("AnonHugePages:") {
        let number = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? -1
        return number * 1024
    }
    return -1
}

/// Gives freed heap pages back to the kernel, so that RSS reflects live memory only. glibc's
/// `malloc_trim` is looked up at run time because the Glibc module does not export malloc.h.
func trimHeap() {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
}

/// The allocation counter of bench/malloc-count.c when it is preloaded, else nil.
let mallocCalls: (@convention(c) () -> UInt64)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "scrolloff_malloc_calls") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) () -> UInt64).self)
}()

/// SplitMix64: small, fast and deterministic, so every run measures the same data.
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// Names packed end to end, like a list file without the newlines.
struct PackedNames {
    var bytes: [UInt8] = []
    var ends: [Int] = []
    var count: Int { ends.count }

    mutating func append(_ name: [UInt8]) {
        bytes.append(contentsOf: name)
        ends.append(bytes.count)
    }

    func range(_ index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    /// The same names in DNS wire format (length-prefixed labels, zero octet at the end).
    func wireFormat() -> PackedNames {
        var wire = PackedNames()
        for index in 0..<count {
            var out: [UInt8] = []
            for label in bytes[range(index)].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
                out.append(UInt8(label.count))
                out.append(contentsOf: label)
            }
            out.append(0)
            wire.append(out)
        }
        return wire
    }
}

func format(_ value: Double, _ digits: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}
