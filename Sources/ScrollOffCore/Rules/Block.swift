/// An entry blocked around the clock ("earning mode", SPEC §2): `scrolloff block instagram`.
public struct Block: Hashable, Sendable, Codable {
    public var entry: EntryID
    public var created: Instant
    /// Until this instant the block cannot be removed (SPEC §3).
    public var cooldownUntil: Instant
    /// The person's own words, shown in `status` and in every refusal.
    public var reason: String?

    public init(entry: EntryID, created: Instant, cooldownUntil: Instant, reason: String? = nil) {
        self.entry = entry
        self.created = created
        self.cooldownUntil = cooldownUntil
        self.reason = reason
    }
}
