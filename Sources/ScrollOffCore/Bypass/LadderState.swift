/// The persisted counters of the bypass ladder (SPEC §5), per profile.
public struct LadderState: Hashable, Sendable, Codable {
    /// The local day the peek counters belong to; a later day starts them at zero.
    public var day: LocalCalendar.Day?
    public var freePeeksUsed = 0
    public var paidPeeksUsed = 0
    /// The calendar month the token counter belongs to.
    public var month: LocalCalendar.Month?
    public var tokensUsed = 0
    /// Per entry: no peek or token before this instant (SPEC §5 lockout).
    public var lockedUntil: [EntryID: Instant] = [:]

    public init() {}
}

/// What a `peek` would be right now, so the CLI can offer the "try this first" exercise before a
/// paid bypass only (SPEC §5 step 3) and say what is left.
public enum BypassStep: Hashable, Sendable, Codable {
    case freePeek
    case paidPeek(costSeconds: Int64)
    /// Peeks are used up for today; a token may still be available.
    case tokenOnly
}
