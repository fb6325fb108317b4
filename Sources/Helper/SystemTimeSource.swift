#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ScrollOffCore

/// The one real clock of the program (ARCHITECTURE §11): reads `CLOCK_REALTIME`, `CLOCK_MONOTONIC`,
/// `CLOCK_BOOTTIME` and the kernel's boot id for ``TrustedClock`` (SPEC §11).
public struct SystemTimeSource: TimeSource {
    /// The boot id does not change while the process lives, so it is read once.
    public let bootID: String

    /// - Parameter bootIDPath: where the kernel publishes the boot id; a test may point elsewhere.
    public init(bootIDPath: String = "/proc/sys/kernel/random/boot_id") {
        bootID = Self.readBootID(path: bootIDPath)
    }

    public func read() -> ClockReading {
        let wall = Self.nanoseconds(CLOCK_REALTIME)
        return ClockReading(
            wall: Instant(millisecondsSince1970: Int64(clamping: wall / 1_000_000)),
            monotonicNanoseconds: UInt64(clamping: Self.nanoseconds(CLOCK_MONOTONIC)),
            bootNanoseconds: UInt64(clamping: Self.nanoseconds(CLOCK_BOOTTIME)),
            bootID: bootID
        )
    }

    private static func nanoseconds(_ clock: clockid_t) -> Int64 {
        var ts = timespec()
        // clock_gettime cannot fail for these clock ids on Linux ≥ 2.6.39; a zero reading would
        // only make the trusted clock fall back to its anchor, never move a rule early.
        guard clock_gettime(clock, &ts) == 0 else { return 0 }
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }

    /// An empty id never matches a saved one, so a missing `/proc` means "new boot": the wall
    /// clock is then checked against the last trusted instant and the build date.
    private static func readBootID(path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "" }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
