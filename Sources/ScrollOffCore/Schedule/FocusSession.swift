/// A one-off block window that starts now (`scrolloff focus 45m`, SPEC §2). It cannot be ended early:
/// a focus session is its own cooldown.
public struct FocusSession: Hashable, Sendable, Codable {
    public var id: Int64
    public var entries: Set<EntryID>
    public var start: Instant
    public var end: Instant
    public var reason: String?

    /// Starts a session at `now` lasting `length`.
    public init(id: Int64, entries: Set<EntryID>, startingAt now: Instant, length: Span, reason: String? = nil) throws(ScheduleError) {
        guard length > .zero else { throw .nonPositiveFocusLength }
        guard !entries.isEmpty else { throw .noEntries }
        self.id = id
        self.entries = entries
        self.start = now
        self.end = now + length
        self.reason = reason
    }

    public var occurrence: Occurrence { Occurrence(start: start, end: end) }
    public func isActive(at t: Instant) -> Bool { start <= t && t < end }
}
