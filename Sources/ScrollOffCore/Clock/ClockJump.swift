/// A tamper event: the system clock and the trusted clock came apart by more than
/// ``TrustedClock/jumpThreshold`` (SPEC §11). Recorded as an event and shown by `doctor`.
public struct ClockJump: Hashable, Sendable, Codable {
    public enum Direction: String, Hashable, Sendable, Codable {
        /// The system clock now reads later than the trusted clock.
        case forward
        /// The system clock now reads earlier than the trusted clock.
        case back
    }

    /// Who moved the trusted clock back to the system clock (SPEC §11 clock recovery); nil for a
    /// jump of the system clock, which moves no rule.
    public enum Correction: String, Hashable, Sendable, Codable {
        /// The kernel reported NTP-synchronised time behind the trusted clock.
        case ntpSynchronised
        /// Root ran `scrolloff-dns clock reset`.
        case rootReset
    }

    public var direction: Direction
    /// The system clock at the moment the jump was seen.
    public var wall: Instant
    /// The trusted time at the same moment; every rule keeps using this one.
    public var trusted: Instant
    /// `wall - trusted` after the jump; for a correction, the new trusted time minus the old.
    public var offset: Span
    /// Set when the trusted clock itself was moved back (then `trusted` is the new trusted time).
    public var correction: Correction?

    public init(direction: Direction, wall: Instant, trusted: Instant, offset: Span, correction: Correction? = nil) {
        self.direction = direction
        self.wall = wall
        self.trusted = trusted
        self.offset = offset
        self.correction = correction
    }

    /// After a jump back, earning stops for the rest of the local day so that moving the clock back
    /// never earns the same hour twice (SPEC §11). Returns the next local midnight in the profile's
    /// zone, or nil for a jump forward (which cannot earn anything: earning runs on trusted time).
    ///
    /// A correction freezes nothing: the trusted clock ran on the boot clock all along, so every
    /// hour it counted was an hour really spent; only its date was wrong.
    public func earningFrozenUntil(in calendar: LocalCalendar) -> Instant? {
        direction == .back && correction == nil ? calendar.nextMidnight(after: trusted) : nil
    }
}
