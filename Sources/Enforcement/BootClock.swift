#if canImport(Glibc)
import Glibc
#endif

/// `CLOCK_BOOTTIME` alone, for the query path: one vDSO call, no boot-id file read, no allocation.
/// The trusted clock turns it into an instant (SPEC §11); the full reading with the wall clock and
/// boot id is `SystemTimeSource`'s, taken on the engine's timer.
public enum BootClock {
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        // Cannot fail for this clock id on Linux ≥ 2.6.39; zero would only make `instant` return
        // the trusted time of the last build, which is never later than the truth.
        guard clock_gettime(CLOCK_BOOTTIME, &ts) == 0 else { return 0 }
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
