/// Everything one profile has that decides whether an entry is blocked, as plain values
/// (the store loads them; the helper passes them here). Evaluation is a pure function of these and
/// a trusted instant.
public struct ProfileRules: Sendable {
    public var blocks: [Block]
    public var schedules: [Schedule]
    public var focusSessions: [FocusSession]
    /// Grants that are running or start later; ended ones may be included and are ignored.
    public var grants: [Grant]
    /// An owner's pause of the whole profile (SPEC §5a), in force from its start to its end;
    /// nil when none was set (or it was lifted). One that is over changes nothing.
    public var pause: Pause?

    public init(blocks: [Block] = [], schedules: [Schedule] = [], focusSessions: [FocusSession] = [], grants: [Grant] = [],
                pause: Pause? = nil) {
        self.blocks = blocks
        self.schedules = schedules
        self.focusSessions = focusSessions
        self.grants = grants
        self.pause = pause
    }

    /// The pause in force at `t`, if any (SPEC §5a).
    public func pause(at t: Instant) -> Pause? {
        guard let pause, pause.isActive(at: t) else { return nil }
        return pause
    }

    /// How far past its last one-off edge (a focus session's or a grant's) `status(of:at:)` looks
    /// for a change. Past that instant only weekly schedules are left, so a week and a day of edges
    /// that change nothing (a block window ending under an around-the-clock block) means the state
    /// never changes: `nextChange` is nil rather than some far edge that changes nothing.
    static let settledLookahead: Span = .hours(24 * 8)
    /// A bound on the edges followed, so a pathological rule set cannot stall a status call. Eight
    /// days of edges is far below it for any real profile (a daily schedule has 16).
    static let maximumEdgesFollowed = 4096

    // MARK: Entry state

    /// The entry's state at `t`, the instant it next changes and what it changes to.
    ///
    /// Precedence: a pause of the profile (SPEC §5a) or a curfew covering the entry wins over
    /// everything, grants included (SPEC §2: "Nothing opens the entries"); then any block (around the clock, an active block window, a
    /// focus session), which a running grant opens; then "scheduled" when a rule names the entry.
    /// A change is a change of the state's kind (curfew → blocked counts; a grant followed at once
    /// by another one does not, and `open(until:)` is the end of the whole open stretch).
    public func status(of entry: EntryID, at t: Instant) -> EntryStatus {
        let (state, reasons) = stateAndReasons(of: entry, at: t)
        let (change, nextKind) = nextChange(of: entry, from: t, kind: state.kind)
        // An open stretch ends at its next change: when the grants run out or a curfew starts.
        if case .open = state, let change {
            return EntryStatus(entry: entry, state: .open(until: change), nextChange: change, reason: reasons.first,
                               reasons: reasons, nextState: nextKind)
        }
        return EntryStatus(entry: entry, state: state, nextChange: change, reason: reasons.first, reasons: reasons, nextState: nextKind)
    }

    /// The entry's state at `t` alone: what the snapshot's timelines are built from.
    public func state(of entry: EntryID, at t: Instant) -> EntryState { stateAndReasons(of: entry, at: t).0 }

    func stateAndReasons(of entry: EntryID, at t: Instant) -> (EntryState, [String]) {
        var reasons: [String] = []
        func note(_ reason: String?) {
            if let reason, !reason.isEmpty, !reasons.contains(reason) { reasons.append(reason) }
        }
        // A pause blocks every name of the profile as a strict curfew does (SPEC §5a): an entry
        // reads `.curfew`, which nothing opens, whatever else names it.
        var curfew = false
        if let p = pause(at: t) {
            curfew = true
            note(p.reason)
        }
        for s in schedules where s.enabled && s.kind.isCurfew && applies(s, to: entry) && s.isActive(at: t) {
            curfew = true
            note(s.reason)
        }
        var blocking = false
        for block in blocks where block.entry == entry {
            blocking = true
            note(block.reason)
        }
        for s in schedules where s.enabled && s.kind == .block && s.entries.contains(entry) && s.isActive(at: t) {
            blocking = true
            note(s.reason)
        }
        for f in focusSessions where f.entries.contains(entry) && f.isActive(at: t) {
            blocking = true
            note(f.reason)
        }
        if curfew { return (.curfew, reasons) }
        if blocking {
            let openUntil = grants.lazy.filter { $0.entry == entry && $0.isActive(at: t) }.map(\.end).max()
            return (openUntil.map { .open(until: $0) } ?? .blocked, reasons)
        }
        let named = schedules.contains { $0.enabled && applies($0, to: entry) }
            || focusSessions.contains { $0.entries.contains(entry) && $0.end > t }
        return (named ? .scheduled : .none, [])
    }

    /// The first instant in `[from, to]` at which a spend on `entry` stops buying anything: a curfew
    /// covers the entry (`curfew` true; nothing opens it, SPEC §2) or no block holds it any more
    /// (a block window or focus session ended: it is open for free). Nil while it stays blocked
    /// and opened throughout. The spend's own end is an edge that changes open → blocked: not a stop.
    public func spendStops(on entry: EntryID, from: Instant, to: Instant) -> (at: Instant, curfew: Bool)? {
        func stop(at t: Instant) -> (at: Instant, curfew: Bool)? {
            switch state(of: entry, at: t).kind {
            case .curfew: return (t, true)
            case .none, .scheduled: return (t, false)
            case .open, .blocked: return nil
            }
        }
        if let s = stop(at: from) { return s }
        var cursor = from
        for _ in 0..<Self.maximumEdgesFollowed {
            guard let edge = nextEdge(of: entry, after: cursor), edge <= to else { return nil }
            if let s = stop(at: edge) { return s }
            cursor = edge
        }
        return nil
    }

    /// The earliest edge after `t` of any rule that can touch `entry`.
    func nextEdge(of entry: EntryID, after t: Instant) -> Instant? {
        var best: Instant?
        func consider(_ edge: Instant?) {
            guard let edge, edge > t else { return }
            if best.map({ edge < $0 }) ?? true { best = edge }
        }
        for s in schedules where s.enabled && applies(s, to: entry) { consider(s.nextEdge(after: t)) }
        for f in focusSessions where f.entries.contains(entry) { consider(f.start); consider(f.end) }
        for g in grants where g.entry == entry { consider(g.start); consider(g.end) }
        if let p = pause { consider(p.start); consider(p.end) }
        return best
    }

    /// The last edge of a one-off rule (focus session, grant) touching `entry`; nil when none has one.
    func lastOneOffEdge(of entry: EntryID) -> Instant? {
        var last: Instant?
        for f in focusSessions where f.entries.contains(entry) { last = max(last ?? f.end, f.end) }
        for g in grants where g.entry == entry { last = max(last ?? g.end, g.end) }
        if let p = pause { last = max(last ?? p.end, p.end) }
        return last
    }

    /// The first edge after `t` at which the entry's state kind differs from `kind`, and the new kind.
    func nextChange(of entry: EntryID, from t: Instant, kind: EntryState.Kind) -> (Instant?, EntryState.Kind?) {
        let settled = max(t, lastOneOffEdge(of: entry) ?? t) + Self.settledLookahead
        var cursor = t
        for _ in 0..<Self.maximumEdgesFollowed {
            guard let edge = nextEdge(of: entry, after: cursor), edge <= settled else { return (nil, nil) }
            let next = state(of: entry, at: edge).kind
            if next != kind { return (edge, next) }
            cursor = edge
        }
        // Too many edges to follow: the last one seen is early, which is safe for TTLs and timers.
        return (cursor, kind)
    }

    // MARK: Which rules touch an entry

    /// Whether some rule names `entry` itself: a block, a schedule listing it, or a focus session.
    /// A strict curfew without entries names nothing (SPEC §9 "managed names").
    func names(_ entry: EntryID) -> Bool {
        blocks.contains { $0.entry == entry }
            || schedules.contains { $0.enabled && $0.entries.contains(entry) }
            || focusSessions.contains { $0.entries.contains(entry) }
    }

    /// Whether schedule `s` decides `entry`'s state: it lists the entry, or it is a strict curfew
    /// and another rule names the entry (so `status` says "curfew" rather than "open").
    ///
    /// Deliberately not `Schedule.covers`, which is true for every entry under a strict curfew:
    /// that would make every catalog service "managed", with urges counted and TTLs capped for
    /// services the person never named. Unnamed names are blocked by the profile's strict-curfew
    /// flag in the snapshot instead (SPEC §2, §9). `covers` stays right for "does a curfew stop a
    /// grant on this entry", which the wallet asks.
    func applies(_ s: Schedule, to entry: EntryID) -> Bool {
        s.entries.contains(entry) || (s.kind.isStrict && names(entry))
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
        // A pause blocks unmanaged names too (SPEC §5a): its edges are this timeline's edges.
        if let p = pause {
            for e in [p.start, p.end] where e > t && best.map({ e < $0 }) ?? true { best = e }
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
        for s in schedules where s.enabled && applies(s, to: entry) {
            consider(s.cooldownUntil)
            consider(ChangeRules.curfewEditLock(of: s, at: t))
        }
        for f in focusSessions where f.entries.contains(entry) && f.isActive(at: t) { consider(f.end) }
        return latest
    }
}
