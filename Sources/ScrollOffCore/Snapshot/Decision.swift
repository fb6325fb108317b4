/// Index of an entry in the catalog order the domain matcher interns (DomainLists).
public typealias EntryIndex = UInt32

/// Id of an interned set of entry indices: the matcher maps a name to one. Id 0 means the name
/// belongs to no entry.
public typealias EntrySetID = UInt32

/// The answer to "is this name blocked for this client now, and for how long" (SPEC §9).
public struct Decision: Hashable, Sendable {
    /// No TTL cap: the name is unmanaged and nothing scheduled changes it.
    public static let uncapped = UInt32.max
    /// SPEC §9: "blocked answers at most 10 s".
    public static let blockedTTLCap: UInt32 = 10

    public var blocked: Bool
    /// Whether the name belongs to an entry of the client's profile (SPEC §9 "managed names"): only
    /// these are counted, and only these get a TTL cap from the rules.
    public var managed: Bool
    /// The longest TTL an answer for this name may carry, in seconds: the seconds left until the
    /// entry set's next change, at least 1, and at most 10 when blocked. ``uncapped`` when no cap applies.
    public var ttlCap: UInt32
    /// The state of the name's entries (the strongest of them): what `status` shows for a name of
    /// one entry. `.none` for an unmanaged name, whether or not a strict curfew blocks it.
    public var kind: EntryState.Kind
    /// Milliseconds since 1970 of the next instant the answer changes; `Int64.max` for never.
    public var changeAt: Int64

    @inlinable public init(blocked: Bool, managed: Bool, ttlCap: UInt32, kind: EntryState.Kind? = nil, changeAt: Int64 = .max) {
        self.blocked = blocked
        self.managed = managed
        self.ttlCap = ttlCap
        self.kind = kind ?? (blocked && managed ? .blocked : managed ? .scheduled : .none)
        self.changeAt = changeAt
    }

    /// The next instant the answer changes, nil for never.
    public var nextChange: Instant? { changeAt == .max ? nil : Instant(millisecondsSince1970: changeAt) }
}
