/// One reading of the machine's three clocks plus the identity of the current boot, taken together.
///
/// SPEC §11 needs all of them: the wall clock is what the person sees and can change; the monotonic
/// and boot clocks cannot be set, and the boot id says whether two boot-clock readings can be
/// compared at all (the boot clock restarts from zero at every boot).
public struct ClockReading: Hashable, Sendable, Codable {
    /// `CLOCK_REALTIME`: settable by anyone with root or by NTP.
    public var wall: Instant
    /// `CLOCK_MONOTONIC` in nanoseconds: never jumps, but stops while the machine is suspended.
    public var monotonicNanoseconds: UInt64
    /// `CLOCK_BOOTTIME` in nanoseconds: never jumps and keeps counting during suspend.
    public var bootNanoseconds: UInt64
    /// `/proc/sys/kernel/random/boot_id`: a fresh random UUID at every boot.
    public var bootID: String
    /// Whether the kernel says an NTP daemon keeps `wall` synchronised (`adjtimex`: no TIME_ERROR,
    /// STA_UNSYNC clear). Only root or the NTP daemon can make it so, and setting the clock by hand
    /// clears it, so it is the one authority a member cannot use that may move the trusted clock
    /// back (SPEC §11 clock recovery). False when unknown.
    public var wallSynchronised: Bool

    public init(wall: Instant, monotonicNanoseconds: UInt64, bootNanoseconds: UInt64, bootID: String,
                wallSynchronised: Bool = false) {
        self.wall = wall
        self.monotonicNanoseconds = monotonicNanoseconds
        self.bootNanoseconds = bootNanoseconds
        self.bootID = bootID
        self.wallSynchronised = wallSynchronised
    }
}

/// The one door to the machine's clocks. The real implementation lives in the Helper module
/// (`SystemTimeSource`); everything in ScrollOffCore takes readings as plain values so that rules
/// test in microseconds and never depend on the time a test happens to run (ARCHITECTURE §11).
public protocol TimeSource: Sendable {
    func read() -> ClockReading
}

/// What the store saves with every commit so that the next start can tell how much time really
/// passed (SPEC §11): the last trusted instant and the boot clock at that moment.
public struct ClockAnchor: Hashable, Sendable, Codable {
    public var trusted: Instant
    public var bootNanoseconds: UInt64
    public var bootID: String

    public init(trusted: Instant, bootNanoseconds: UInt64, bootID: String) {
        self.trusted = trusted
        self.bootNanoseconds = bootNanoseconds
        self.bootID = bootID
    }
}
