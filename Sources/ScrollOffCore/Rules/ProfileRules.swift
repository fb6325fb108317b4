/// Everything one profile has that decides whether an entry is blocked, as plain values
/// (the store loads them; the helper passes them here). Evaluation is a pure function of these and
/// a trusted instant.
public struct ProfileRules: Sendable {
    public var blocks: [Block]
    public var schedules: [Schedule]
    public var focusSessions: [FocusSession]
    /// Grants that are running or start later; ended ones may be included and are ignored.
    public var grants: [Grant]

    public init(blocks: [Block] = [], schedules: [Schedule] = [], focusSessions: [FocusSession] = [], grants: [Grant] = []) {
        self.blocks = blocks
        self.schedules = schedules
        self.focusSessions = focusSessions
        self.grants = grants
    }

    /// How many rule edges past the first one `status(of:at:)` follows to find the instant the state
    /// really changes. Edges that change nothing (a block window ending under an around-the-clock
    /// block) are skipped; past this many the earliest unresolved edge is returned, which is early
    /// and therefore safe for TTLs and timers.
    static let maximumEdgesFollowed = 32

    // MARK: Entry state

    /// The entry's state at `t` and the instant it next changes.
    ///
    /// Precedence: a curfew covering the entry wins over everything, grants included (SPEC §2:
    /// "Nothing opens the entries"); then any block (around the clock, an active block window, a
    /// focus session), which a running grant opens; then "scheduled" when a rule names the entry.
    public func status(of entry: EntryID, at t: Instant) -> EntryStatus {
        let (state, reason) = stateAndReason(of: entry, at: t)
        let change = nextChange(of: entry, from: t, state: state)
        // A grant running into a curfew is open only until the curfew starts: say so in the state.
        if case .open(let until) = state, let change, change < until {
            return EntryStatus(entry: entry, state: .open(until: change), nextChange: change, reason: reason)
        }
        return EntryStatus(entry: entry, state: state, nextChange: change, reason: reason)
    }

    func stateAndReason(of entry: EntryID, at t: Instant) -> (EntryState, String?) {
        var blockReason: String?
        var blocking = false
        for s in schedules where s.enabled && s.covers(entry) && s.kind.isCurfew && s.isActive(at: t) {
            return (.curfew, s.reason)
        }
        if let block = blocks.first(where: { $0.entry == entry }) {
            blocking = true
            blockReason = block.reason
        }
        if !blocking, let s = schedules.first(where: { $0.enabled && $0.kind == .block && $0.entries.contains(entry) && $0.isActive(at: t) }) {
            blocking = true
            blockReason = s.reason
        }
        if !blocking, let f = focusSessions.first(where: { $0.entries.contains(entry) && $0.isActive(at: t) }) {
            blocking = true
            blockReason = f.reason
        }
        if blocking {
            let openUntil = grants.lazy.filter { $0.entry == entry && $0.isActive(at: t) }.map(\.end).max()
            return (openUntil.map { .open(until: $0) } ?? .blocked, blockReason)
        }
        let named = schedules.contains { $0.enabled && $0.covers(entry) }
            || focusSessions.contains { $0.entries.contains(entry) && $0.end > t }
        return (named ? .scheduled : .none, nil)
    }

    /// The earliest edge after `t` of any rule that can touch `entry`.
    func nextEdge(of entry: EntryID, after t: Instant) -> Instant? {
        var best: Instant?
        func consider(_ edge: Instant?) {
            guard let edge, edge > t else { return }
            if best.map({ edge < $0 }) ?? true { best = edge }
        }
        for s in schedules where s.enabled && s.covers(entry) { consider(s.nextEdge(after: t)) }
        for f in focusSessions where f.entries.contains(entry) { consider(f.start); consider(f.end) }
        for g in grants where g.entry == entry { consider(g.start); consider(g.end) }
        return best
    }

    func nextChange(of entry: EntryID, from t: Instant, state: EntryState) -> Instant? {
        var cursor = t
        for _ in 0..<Self.maximumEdgesFollowed {
            guard let edge = nextEdge(of: entry, after: cursor) else { return nil }
            if stateAndReason(of: entry, at: edge).0 != state { return edge }
            cursor = edge
        }
        return cursor
    }

    // MARK: Strict curfew

    /// The strict curfew in force at `t`, if any: every name except the always-allow list is blocked
    /// for the whole profile (SPEC §2).
    public func strictCurfew(at t: Instant) -> (schedule: Schedule, occurrence: Occurrence)? {
        for s in schedules where s.enabled && s.kind.isStrict {
            if let o = s.occurrence(containing: t) { return (s, o) }
        }
        return nil
    }

    /// The next instant a strict curfew starts or ends: unmanaged names change then too.
    public func nextStrictCurfewEdge(after t: Instant) -> Instant? {
        var best: Instant?
        for s in schedules where s.enabled && s.kind.isStrict {
            if let e = s.nextEdge(after: t), best.map({ e < $0 }) ?? true { best = e }
        }
        // Two strict curfews may overlap; an edge inside the other one changes nothing, but reporting
        // it is harmless (answers just live shorter and the snapshot is rebuilt once more).
        return best
    }

    // MARK: Locks, for `status` → `locked_until` (SPEC §13)

    /// Until when a weakening of `entry`'s rules would be refused: the latest of its block's cooldown,
    /// the cooldowns of enabled schedules naming it, running focus sessions and curfew edit locks.
    /// Nil when nothing is locked now.
    public func lockedUntil(of entry: EntryID, at t: Instant) -> Instant? {
        var latest: Instant?
        func consider(_ until: Instant?) {
            guard let until, until > t else { return }
            if latest.map({ until > $0 }) ?? true { latest = until }
        }
        for b in blocks where b.entry == entry { consider(b.cooldownUntil) }
        for s in schedules where s.enabled && s.covers(entry) {
            consider(s.cooldownUntil)
            consider(ChangeRules.curfewEditLock(of: s, at: t))
        }
        for f in focusSessions where f.entries.contains(entry) && f.isActive(at: t) { consider(f.end) }
        return latest
    }
}
