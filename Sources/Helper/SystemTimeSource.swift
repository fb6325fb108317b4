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
    /// The kernel's NTP-synchronised time, or nil while it is not synchronised (or cannot be asked).
    let synchronisedTime: @Sendable () -> Instant?

    /// - Parameters:
    ///   - bootIDPath: where the kernel publishes the boot id; a test may point elsewhere.
    ///   - synchronisedTime: the kernel's sync status (``KernelClockSync/synchronisedTime()``).
    public init(bootIDPath: String = "/proc/sys/kernel/random/boot_id",
                synchronisedTime: @escaping @Sendable () -> Instant? = KernelClockSync.synchronisedTime) {
        bootID = Self.readBootID(path: bootIDPath)
        self.synchronisedTime = synchronisedTime
    }

    /// How far the wall clock this process reads may be from the kernel's synchronised time and
    /// still count as synchronised: both are read a few microseconds apart.
    static let synchronisedTolerance = Span.seconds(2)

    public func read() -> ClockReading {
        let wall = Instant(millisecondsSince1970: Int64(clamping: Self.nanoseconds(CLOCK_REALTIME) / 1_000_000))
        // The wall clock counts as synchronised only when it is the kernel's: a process whose clock
        // is faked (libfaketime preloaded) sees another time than the kernel reports with its status.
        let synchronised = synchronisedTime().map { abs(($0 - wall).milliseconds) <= Self.synchronisedTolerance.milliseconds } ?? false
        return ClockReading(
            wall: wall,
            monotonicNanoseconds: UInt64(clamping: Self.nanoseconds(CLOCK_MONOTONIC)),
            bootNanoseconds: UInt64(clamping: Self.nanoseconds(CLOCK_BOOTTIME)),
            bootID: bootID,
            wallSynchronised: synchronised
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

/// The kernel's NTP status (SPEC §11 clock recovery): the one authority besides root that may move
/// the trusted clock back. Only root or an NTP daemon (with CAP_SYS_TIME) can clear STA_UNSYNC, and
/// setting the clock by hand (`date -s`, `timedatectl set-time`) sets it again.
public enum KernelClockSync {
    /// The kernel's `CLOCK_REALTIME` as `adjtimex(2)` reports it, when the kernel says it is
    /// synchronised: the call does not answer TIME_ERROR and STA_UNSYNC is clear. Nil otherwise, and
    /// nil when the call is refused (a seccomp filter: systemd's `ProtectClock=` denies even the
    /// read-only call), since an unknown status is no authority.
    public static func synchronisedTime() -> Instant? {
        #if arch(x86_64) || arch(arm64)
        // Swift's Glibc module does not export <sys/timex.h>, so `struct timex` (208 bytes on
        // 64-bit Linux) is a zeroed buffer (modes 0: read only, needs no privilege) and the three
        // fields used are read at their offsets: status (int) at 40, time.tv_sec and tv_usec at 72, 80.
        guard let call = adjtimexCall else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let (state, status, seconds, fraction) = buffer.withUnsafeMutableBytes { raw -> (Int32, Int32, Int64, Int64) in
            let state = call(raw.baseAddress!)
            return (state, raw.load(fromByteOffset: 40, as: Int32.self), raw.load(fromByteOffset: 72, as: Int64.self),
                    raw.load(fromByteOffset: 80, as: Int64.self))
        }
        let timeError: Int32 = 5, unsynchronised: Int32 = 0x0040, nanoseconds: Int32 = 0x2000 // <sys/timex.h>
        guard state >= 0, state != timeError, status & unsynchronised == 0 else { return nil }
        // With STA_NANO the field named microseconds holds nanoseconds.
        let milliseconds = status & nanoseconds != 0 ? fraction / 1_000_000 : fraction / 1000
        return Instant(millisecondsSince1970: seconds &* 1000 &+ milliseconds)
        #else
        return nil
        #endif
    }

    private static let adjtimexCall: (@convention(c) (UnsafeMutableRawPointer) -> Int32)? = {
        guard let symbol = dlsym(nil, "adjtimex") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer) -> Int32).self)
    }()
}
