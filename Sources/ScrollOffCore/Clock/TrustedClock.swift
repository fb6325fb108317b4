/// The helper's notion of "now" (SPEC §11): a clock that the person cannot move by setting the
/// system clock, so that no cooldown, curfew or edit lock ends early and no credit is earned twice.
///
/// Pure value: it is fed ``ClockReading``s and never reads a clock itself.
///
/// - At start, within the same boot (same boot id, boot clock not behind the anchor) the trusted
///   time is the anchor plus the boot-clock time elapsed. `CLOCK_BOOTTIME` cannot be set, so this is
///   exact in both directions: a wall clock moved forward shows *more* time passed than really did,
///   and one moved back would make the trusted clock run backwards, which it never does.
/// - After a reboot the boot clocks cannot be compared, so the wall clock is taken, unless it reads
///   earlier than the last trusted instant (the clock was set back while the machine was off: the
///   trusted clock resumes from the anchor) or earlier than the build date (a router without a
///   real-time clock: the trusted clock starts from the latest known instant and takes the wall clock
///   as soon as NTP sets it).
/// - While running it advances by the boot clock's elapsed time. The brief for this clock says
///   "monotonic"; `CLOCK_BOOTTIME` *is* monotonic and, unlike `CLOCK_MONOTONIC`, keeps counting during
///   suspend, so a laptop waking up does not look like a forward jump. `CLOCK_MONOTONIC` is the
///   fallback when a boot-clock reading is unusable.
/// - It never runs backwards on its own, so a start with the wall clock far ahead (a router whose
///   real-time clock boots wrong, a `faketime` start) would keep it ahead for good. It is moved back
///   only by an authority a member cannot use (SPEC §11 clock recovery): a wall clock the kernel
///   reports NTP-synchronised (``ClockReading/wallSynchronised``) that reads more than
///   ``jumpThreshold`` behind it, here; root's `scrolloff-dns clock reset`, which rewrites the
///   saved anchor while the helper is stopped. Each is a ``ClockJump`` with a `correction`. Rules'
///   instants are absolute, so a lock until 18:00 still ends at 18:00 on the corrected clock.
public struct TrustedClock: Sendable {
    /// SPEC §11: "differ by more than 10 minutes".
    public static let jumpThreshold = Span.minutes(10)

    /// Where the current trusted time comes from, for `doctor` and for the log.
    public enum Basis: String, Hashable, Sendable, Codable {
        /// The system clock, taken at start on a new boot (or when NTP arrived after an untrusted start).
        case wallClock
        /// The saved anchor plus the boot-clock time elapsed in the same boot.
        case sameBootElapsed
        /// The saved anchor: after a reboot the system clock read earlier than the last trusted instant.
        case lastTrusted
        /// The system clock read earlier than the build date; waiting for it to be set (by NTP).
        case awaitingWallClock
    }

    public let buildDate: Instant
    public private(set) var basis: Basis
    /// The trusted time as of the last reading.
    public private(set) var now: Instant
    /// A jump seen at start (same boot with the clock moved while the helper was stopped, or a clock
    /// set back across a reboot). Record it like any other ``ClockJump``.
    public private(set) var startJump: ClockJump?

    // The trusted time is always `base + (reading - baseReading)`, never a running sum, so rounding
    // nanoseconds to milliseconds cannot accumulate drift over a long run.
    private var baseTrusted: Instant
    private var baseBootNanoseconds: UInt64
    private var baseMonotonicNanoseconds: UInt64
    private var bootID: String
    private var lastBootNanoseconds: UInt64
    /// The offset (`wall - trusted`) last reported as a jump; zero while the two agree.
    private var reportedOffset: Span = .zero

    /// - Parameters:
    ///   - anchor: the anchor saved with the last commit, nil on first run.
    ///   - buildDate: the helper's build date; a wall clock earlier than this is not trusted.
    ///   - reading: the clocks as read at start.
    public init(anchor: ClockAnchor?, buildDate: Instant, reading: ClockReading) {
        self.buildDate = buildDate
        bootID = reading.bootID
        baseBootNanoseconds = reading.bootNanoseconds
        baseMonotonicNanoseconds = reading.monotonicNanoseconds
        lastBootNanoseconds = reading.bootNanoseconds

        let start: Instant
        if let anchor, anchor.bootID == reading.bootID, reading.bootNanoseconds >= anchor.bootNanoseconds {
            start = anchor.trusted + Self.span(nanoseconds: reading.bootNanoseconds - anchor.bootNanoseconds)
            basis = .sameBootElapsed
        } else {
            // Latest instant known to have happened: the build, or the last trusted commit.
            let floor = max(buildDate, anchor?.trusted ?? buildDate)
            if reading.wall >= floor {
                start = reading.wall
                basis = .wallClock
            } else if reading.wall >= buildDate {
                start = floor
                basis = .lastTrusted
            } else {
                start = floor
                basis = .awaitingWallClock
            }
        }
        baseTrusted = start
        now = start
        startJump = nil
        if let correction = correctBack(to: reading) {
            startJump = correction
        } else {
            startJump = detectJump(wall: reading.wall)
        }
    }

    /// Moves the trusted clock to `reading`.
    /// - Returns: a tamper event when the system clock has just come apart from the trusted clock by
    ///   more than ``jumpThreshold`` (reported once per jump, not at every reading).
    public mutating func advance(to reading: ClockReading) -> ClockJump? {
        let elapsed: Span
        if reading.bootID == bootID, reading.bootNanoseconds >= baseBootNanoseconds {
            elapsed = Self.span(nanoseconds: reading.bootNanoseconds - baseBootNanoseconds)
            lastBootNanoseconds = reading.bootNanoseconds
        } else if reading.monotonicNanoseconds >= baseMonotonicNanoseconds {
            elapsed = Self.span(nanoseconds: reading.monotonicNanoseconds - baseMonotonicNanoseconds)
        } else {
            elapsed = now - baseTrusted
        }
        // Never backwards, whatever the readings say.
        now = max(now, baseTrusted + elapsed)

        if basis == .awaitingWallClock, reading.wall >= buildDate {
            if reading.wall >= now {
                // NTP has set the clock: take it, as SPEC §11 says for routers without an RTC.
                rebase(on: reading, at: reading.wall)
                basis = .wallClock
                reportedOffset = .zero
                return nil
            }
            // Set, but to before what is already known to have happened: keep the trusted time.
            basis = .lastTrusted
        }
        if basis == .awaitingWallClock { return nil }
        if let correction = correctBack(to: reading) { return correction }
        return detectJump(wall: reading.wall)
    }

    /// Moves the trusted clock back to a wall clock the kernel reports NTP-synchronised, when that
    /// reads more than ``jumpThreshold`` behind it (SPEC §11 clock recovery). A wall clock earlier
    /// than the build is never taken, synchronised or not. Forward it never moves: forward, the
    /// boot clock already counts every second that really passed.
    private mutating func correctBack(to reading: ClockReading) -> ClockJump? {
        guard reading.wallSynchronised, reading.wall >= buildDate, now - reading.wall > Self.jumpThreshold else { return nil }
        let before = now
        rebase(on: reading, at: reading.wall)
        basis = .wallClock
        reportedOffset = .zero
        return ClockJump(direction: .back, wall: reading.wall, trusted: reading.wall, offset: reading.wall - before,
                         correction: .ntpSynchronised)
    }

    /// The trusted time at a boot-clock reading, without the jump check: cheap enough for a hot path
    /// that reads only `CLOCK_BOOTTIME` per query while ``advance(to:)`` runs on a timer.
    /// Never earlier than ``now``.
    public func instant(atBootNanoseconds boot: UInt64) -> Instant {
        guard boot >= baseBootNanoseconds else { return now }
        return max(now, baseTrusted + Self.span(nanoseconds: boot - baseBootNanoseconds))
    }

    /// The anchor to save with every commit.
    public var anchor: ClockAnchor {
        ClockAnchor(trusted: now, bootNanoseconds: lastBootNanoseconds, bootID: bootID)
    }

    /// Whether the system clock currently agrees with the trusted clock within ``jumpThreshold``.
    public func agrees(withWall wall: Instant) -> Bool {
        Self.magnitude(wall - now) <= Self.jumpThreshold
    }

    private mutating func rebase(on reading: ClockReading, at trusted: Instant) {
        baseTrusted = trusted
        baseBootNanoseconds = reading.bootNanoseconds
        baseMonotonicNanoseconds = reading.monotonicNanoseconds
        lastBootNanoseconds = reading.bootNanoseconds
        now = trusted
    }

    private mutating func detectJump(wall: Instant) -> ClockJump? {
        guard basis != .awaitingWallClock else { return nil }
        let offset = wall - now
        guard Self.magnitude(offset) > Self.jumpThreshold else {
            reportedOffset = .zero
            return nil
        }
        let change = offset - reportedOffset
        guard Self.magnitude(change) > Self.jumpThreshold else { return nil }
        reportedOffset = offset
        return ClockJump(direction: change > .zero ? .forward : .back, wall: wall, trusted: now, offset: offset)
    }

    private static func span(nanoseconds: UInt64) -> Span {
        Span(milliseconds: Int64(clamping: nanoseconds / 1_000_000))
    }

    private static func magnitude(_ s: Span) -> Span { s < .zero ? Span(milliseconds: -s.milliseconds) : s }
}
