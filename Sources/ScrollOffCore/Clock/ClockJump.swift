/// A tamper event: the system clock and the trusted clock came apart by more than
/// ``TrustedClock/jumpThreshold`` (SPEC §11). Recorded as an event and shown by `doctor`.
public struct ClockJump: Hashable, Sendable, Codable {
    public enum Direction: String, Hashable, Sendable, Codable {
        /// The system clock now reads later than the trusted clock.
        case forward
        /// The system clock now reads earlier than the trusted clock.
        case back
    }

    public var direction: Direction
    /// The system clock at the moment the jump was seen.
    public var wall: Instant
    /// The trusted time at the same moment; every rule keeps using this one.
    public var trusted: Instant
    /// `wall - trusted` after the jump.
    public var offset: Span

    public init(direction: Direction, wall: Instant, trusted: Instant, offset: Span) {
        self.direction = direction
        self.wall = wall
        self.trusted = trusted
        self.offset = offset
    }

    /// After a jump back, earning stops for the rest of the local day so that moving the clock back
    /// never earns the same hour twice (SPEC §11). Returns the next local midnight in the profile's
    /// zone, or nil for a jump forward (which cannot earn anything: earning runs on trusted time).
    public func earningFrozenUntil(in calendar: LocalCalendar) -> Instant? {
        direction == .back ? calendar.nextMidnight(after: trusted) : nil
    }
}
