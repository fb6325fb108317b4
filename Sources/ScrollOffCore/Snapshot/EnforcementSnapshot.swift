/// The hot-path decision (ARCHITECTURE "data flows one way"): an immutable table built from every
/// profile's entry states at one instant, answering with an array index and a subtraction.
///
/// Building walks every profile × entry set once; a lookup then does no allocation, no hashing of
/// strings and no calendar math. The helper rebuilds the snapshot whenever state changes and at
/// ``validUntil`` (the earliest change of any entry in any profile), and swaps it atomically.
public final class EnforcementSnapshot: Sendable {
    /// One profile × entry-set answer. `changeAt` is absolute so that the TTL keeps counting down
    /// for as long as the snapshot is in use, not from the moment it was built.
    @usableFromInline struct Cell: Sendable {
        @usableFromInline var blocked: Bool
        @usableFromInline var managed: Bool
        /// Milliseconds since 1970 of the set's next change; `Int64.max` for never.
        @usableFromInline var changeAt: Int64
    }

    public let builtAt: Instant
    public let profileCount: Int
    /// Number of entry-set ids, id 0 (no entry) included.
    public let setCount: Int
    /// The earliest instant at which any answer in the table changes; nil for never.
    public let validUntil: Instant?

    @usableFromInline let cells: ContiguousArray<Cell>
    @usableFromInline let strictCurfew: ContiguousArray<Bool>

    /// - Parameters:
    ///   - entrySets: `entrySets[id]` lists the entry indices of set `id`; `entrySets[0]` should be
    ///     empty (id 0 is "no entry" whatever it holds).
    ///   - profiles: one evaluated state per profile, index 0 being the default profile; each state's
    ///     `entries[i]` belongs to entry index `i`. Indices beyond a state's entries count as unmanaged.
    ///   - builtAt: the trusted instant the states were evaluated at.
    public init(entrySets: [[EntryIndex]], profiles: [ProfileState], builtAt: Instant) {
        self.builtAt = builtAt
        profileCount = profiles.count
        setCount = max(entrySets.count, 1)
        var cells = ContiguousArray<Cell>()
        cells.reserveCapacity(profileCount * setCount)
        var earliest = Int64.max
        for profile in profiles {
            let strictEdge = profile.strictCurfewNextEdge?.millisecondsSince1970 ?? .max
            for id in 0..<setCount {
                // A strict curfew blocks every name of the profile, managed or not (SPEC §2), and
                // its edges change every answer.
                var cell = Cell(blocked: profile.isStrictCurfew, managed: false, changeAt: strictEdge)
                if id > 0, id < entrySets.count {
                    for index in entrySets[id] where Int(index) < profile.entries.count {
                        let status = profile.entries[Int(index)]
                        // Any blocking entry blocks the name: a grant on one entry does not open names
                        // another entry still blocks.
                        cell.blocked = cell.blocked || status.state.isBlocking
                        cell.managed = cell.managed || status.state.isManaged
                        if let change = status.nextChange?.millisecondsSince1970 { cell.changeAt = min(cell.changeAt, change) }
                    }
                }
                earliest = min(earliest, cell.changeAt)
                cells.append(cell)
            }
        }
        self.cells = cells
        strictCurfew = ContiguousArray(profiles.map(\.isStrictCurfew))
        validUntil = earliest == .max ? nil : Instant(millisecondsSince1970: earliest)
    }

    /// Decides for a name in entry set `set` asked by a client of profile `profile`.
    ///
    /// The caller checks the always-allow list first (allow beats block, SPEC §1). An unknown
    /// profile index falls back to the default profile 0; an unknown set id counts as "no entry".
    /// - Parameter now: the trusted time of the query, for the TTL count-down.
    @inlinable public func decide(profile: Int, set: EntrySetID, now: Instant) -> Decision {
        guard profileCount > 0 else { return Decision(blocked: false, managed: false, ttlCap: Decision.uncapped) }
        let p = profile >= 0 && profile < profileCount ? profile : 0
        let s = Int(set) < setCount ? Int(set) : 0
        let cell = cells[p &* setCount &+ s]
        var ttl = Decision.uncapped
        if cell.changeAt != .max {
            let left = (cell.changeAt &- now.millisecondsSince1970) / 1000 // floor: never outlive the change
            ttl = left < 1 ? 1 : (left >= Int64(UInt32.max) ? UInt32.max - 1 : UInt32(truncatingIfNeeded: left))
        }
        if cell.blocked, ttl > Decision.blockedTTLCap { ttl = Decision.blockedTTLCap }
        return Decision(blocked: cell.blocked, managed: cell.managed, ttlCap: ttl)
    }

    /// Whether a strict curfew is in force for `profile` (every name but the allow list blocked).
    @inlinable public func isStrictCurfew(profile: Int) -> Bool {
        profile >= 0 && profile < strictCurfew.count ? strictCurfew[profile] : false
    }
}
