/// The hot-path decision (ARCHITECTURE "data flows one way"): for every profile × entry set, the
/// timeline of its states over a horizon, so the answer is a pure function of (rules, trusted now)
/// at every instant of the horizon, whether or not the engine's timer fired (SPEC §3 "Enforcement
/// at every instant", ARCHITECTURE principle 13).
///
/// Layout: flat arrays. `cells[profile × setCount + set]` and `strict[profile]` are ranges into one
/// `segments` array; a lookup is an index, a scan (or bisection) over a handful of segments and a
/// subtraction, with no allocation, no lock, no hashing of strings and no calendar math.
///
/// Only entry sets that contain an entry some rule names get segments; every other set is answered
/// by the profile's strict-curfew timeline alone, so the build costs the profile's rules, not the
/// catalog.
///
/// Past ``horizon`` the snapshot no longer knows: managed names fail closed (blocked, TTL 1 s) until
/// the engine publishes a new one; ``needsRebuild(at:)`` tells the DNS side to wake the engine.
public final class EnforcementSnapshot: Sendable {
    /// One stretch of a state: from `start` (ms since 1970) until the next segment of the same range.
    @usableFromInline struct Segment: Sendable {
        @usableFromInline var start: Int64
        @usableFromInline var kind: EntryState.Kind
    }

    /// `count` segments from `offset`; `count` 0 means no entry of the set has a rule.
    @usableFromInline struct Range: Sendable {
        @usableFromInline var offset: Int32
        @usableFromInline var count: Int32
    }

    /// How far ahead a snapshot knows the answers. The engine republishes at least every
    /// ``refreshInterval``, so a healthy helper never comes near the end of it.
    public static let defaultHorizon: Span = .hours(48)

    public let builtAt: Instant
    /// The end of the timelines: from here on managed names fail closed.
    public let horizon: Instant
    /// When the engine should have published a newer snapshot (half the horizon after the build).
    public let refreshAt: Instant
    public let profileCount: Int
    /// Number of entry-set ids, id 0 (no entry) included.
    public let setCount: Int
    /// The earliest instant after the build at which any answer in the table changes; nil for none
    /// before the horizon. The engine republishes then for consumers that hold whole states (hosts mode).
    public let validUntil: Instant?

    @usableFromInline let horizonMilliseconds: Int64
    @usableFromInline let cells: ContiguousArray<Range>
    /// `entryCells[profile × entryCount + entry]`: one entry's own timeline, for bookkeeping that
    /// needs entries rather than names (urges, `doctor`'s probe); shares segments with the sets.
    @usableFromInline let entryCells: ContiguousArray<Range>
    @usableFromInline let entryCount: Int
    @usableFromInline let strict: ContiguousArray<Range>
    /// Every range's segments, back to back.
    @usableFromInline let segments: ContiguousArray<Segment>

    /// Builds every profile's timelines over `[builtAt, builtAt + horizon)`.
    /// - Parameters:
    ///   - entrySets: `entrySets[id]` lists the entry indices of set `id`; `entrySets[0]` should be
    ///     empty (id 0 is "no entry" whatever it holds).
    ///   - entries: entry index → entry id (the matcher's order).
    ///   - profiles: one rule set per profile, index 0 being the default profile.
    ///   - indexOfEntry: entry id → index; computed from `entries` when nil.
    ///   - setsContaining: entry index → the set ids holding it; computed from `entrySets` when nil.
    ///     The engine keeps both with its matcher, so a rebuild does not walk the catalog.
    public init(entrySets: [[EntryIndex]], entries: [EntryID], profiles: [ProfileRules], builtAt: Instant,
                horizon: Span = EnforcementSnapshot.defaultHorizon,
                indexOfEntry: [EntryID: Int]? = nil, setsContaining: [[EntrySetID]]? = nil) {
        self.builtAt = builtAt
        let end = builtAt + horizon
        self.horizon = end
        horizonMilliseconds = end.millisecondsSince1970
        refreshAt = builtAt + Span(milliseconds: horizon.milliseconds / 2)
        profileCount = profiles.count
        let setCount = max(entrySets.count, 1)
        self.setCount = setCount
        let index = indexOfEntry ?? Dictionary(entries.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let containing = setsContaining ?? Self.setsContaining(entrySets, entryCount: entries.count)

        var segments = ContiguousArray<Segment>()
        var cells = ContiguousArray(repeating: Range(offset: 0, count: 0), count: profiles.count * setCount)
        var strict = ContiguousArray<Range>()
        let entryCount = entries.count
        self.entryCount = entryCount
        var entryCells = ContiguousArray(repeating: Range(offset: 0, count: 0), count: profiles.count * entryCount)
        var earliest = Int64.max
        func append(_ steps: [TimelineStep], continues: Bool) -> Range {
            let offset = Int32(segments.count)
            for (i, step) in steps.enumerated() {
                // The first step holds from any earlier instant too: a query a moment before the
                // build (a reading taken just before the publish) gets the build's answer.
                segments.append(Segment(start: i == 0 ? .min : step.start.millisecondsSince1970, kind: step.kind))
                if i > 0 { earliest = min(earliest, step.start.millisecondsSince1970) }
            }
            // A closing segment at the horizon: the last state's answers live no longer than it.
            if continues { segments.append(Segment(start: end.millisecondsSince1970, kind: steps[steps.count - 1].kind)) }
            return Range(offset: offset, count: Int32(segments.count) - offset)
        }

        for (p, rules) in profiles.enumerated() {
            let s = rules.strictCurfewTimeline(from: builtAt, until: end)
            strict.append(append(s.steps, continues: s.continuesPastHorizon))
            var timelines: [Int: Timeline] = [:]
            for id in rules.entriesWithRules {
                guard let i = index[id] else { continue }
                let t = rules.timeline(of: id, from: builtAt, until: end)
                // An entry that is `.none` for good answers like an entry with no rule.
                if t.steps.count == 1, t.steps[0].kind == .none, !t.continuesPastHorizon { continue }
                timelines[i] = t
            }
            var ranges: [Int: Range] = [:]
            for (i, t) in timelines.sorted(by: { $0.key < $1.key }) {
                let range = append(t.steps, continues: t.continuesPastHorizon)
                ranges[i] = range
                entryCells[p * entryCount + i] = range
            }
            var touched = Set<Int>()
            for i in timelines.keys where i < containing.count { for set in containing[i] { touched.insert(Int(set)) } }
            for set in touched.sorted() where set > 0 && set < entrySets.count {
                let named = entrySets[set].filter { timelines[Int($0)] != nil }
                // A set with one ruled entry (most of them) shares that entry's segments.
                if named.count == 1, let range = ranges[Int(named[0])] {
                    cells[p * setCount + set] = range
                    continue
                }
                let combined = Self.combine(named.compactMap { timelines[Int($0)] }, from: builtAt)
                cells[p * setCount + set] = append(combined.steps, continues: combined.continuesPastHorizon)
            }
        }
        self.segments = segments
        self.cells = cells
        self.entryCells = entryCells
        self.strict = strict
        validUntil = earliest == .max ? nil : Instant(millisecondsSince1970: earliest)
    }

    /// Entry index → the ids of the sets holding it.
    public static func setsContaining(_ entrySets: [[EntryIndex]], entryCount: Int) -> [[EntrySetID]] {
        var result = Array(repeating: [EntrySetID](), count: entryCount)
        for (set, members) in entrySets.enumerated() where set > 0 {
            for m in members where Int(m) < entryCount { result[Int(m)].append(EntrySetID(set)) }
        }
        return result
    }

    /// A name in several entries answers as the strongest of their states at every instant (any
    /// blocking entry blocks it: a grant on one entry does not open names another still blocks).
    static func combine(_ members: [Timeline], from: Instant) -> Timeline {
        if members.count == 1 { return members[0] }
        var edges: [Instant] = []
        for m in members { for step in m.steps.dropFirst() { edges.append(step.start) } }
        var cursors = Array(repeating: 0, count: members.count)
        let steps = ProfileRules.steps(from: from, edges: edges) { t in
            var kind = EntryState.Kind.none
            for (j, m) in members.enumerated() {
                while cursors[j] + 1 < m.steps.count, m.steps[cursors[j] + 1].start <= t { cursors[j] += 1 }
                kind = max(kind, m.steps[cursors[j]].kind)
            }
            return kind
        }
        return Timeline(steps: steps, continuesPastHorizon: members.contains { $0.continuesPastHorizon })
    }

    /// The segment of `range` in force at `t` (the last one starting at or before it), and the start
    /// of the next one (`Int64.max` when none). One unsafe buffer for the whole search.
    @inlinable func lookup(_ range: Range, _ t: Int64) -> (kind: EntryState.Kind, next: Int64) {
        segments.withUnsafeBufferPointer { seg in
            let first = Int(range.offset)
            let last = first &+ Int(range.count) &- 1
            // Invariant: seg[lo].start <= t (the first segment starts at Int64.min). Most ranges
            // hold a few segments and `now` is near the build, so a forward scan beats bisection.
            var lo = first
            if last &- first <= 8 {
                while lo < last, seg[lo &+ 1].start <= t { lo &+= 1 }
            } else {
                var hi = last
                while lo < hi {
                    let mid = (lo &+ hi &+ 1) >> 1
                    if seg[mid].start <= t { lo = mid } else { hi = mid &- 1 }
                }
            }
            return (seg[lo].kind, lo < last ? seg[lo &+ 1].start : .max)
        }
    }

    /// Decides for a name in entry set `set` asked by a client of profile `profile` at `now`.
    ///
    /// The caller checks the always-allow list first (allow beats block, SPEC §1). An unknown
    /// profile index falls back to the default profile 0; an unknown set id counts as "no entry".
    /// A managed set answers from its own timeline (a named entry's state already holds the strict
    /// curfew); an unmanaged one from the profile's strict-curfew timeline.
    /// TTL (SPEC §9): the seconds left until the answer changes, floored, at least 1; at most 10 s
    /// when blocked; ``Decision/uncapped`` when nothing will change it.
    @inlinable public func decide(profile: Int, set: EntrySetID, now: Instant) -> Decision {
        guard profileCount > 0 else { return Decision(blocked: false, managed: false, ttlCap: Decision.uncapped) }
        let p = profile >= 0 && profile < profileCount ? profile : 0
        let s = Int(set) < setCount ? Int(set) : 0
        let t = now.millisecondsSince1970
        let cell = cells[p &* setCount &+ s]
        if t >= horizonMilliseconds {
            // Beyond what this snapshot knows: fail closed for managed names (SPEC §3), and for
            // every name of a profile that has a strict curfew (its range holds an edge or a
            // curfew), since one may be in force by now.
            let managed = cell.count > 0 && segments[Int(cell.offset) &+ Int(cell.count) &- 1].kind.isManaged
            let strictRange = strict[p]
            let strictKnown = strictRange.count > 1 || segments[Int(strictRange.offset)].kind.isBlocking
            return Decision(blocked: managed || strictKnown, managed: managed, ttlCap: 1, kind: managed ? .blocked : .none, changeAt: t)
        }
        var kind = EntryState.Kind.none
        var next = Int64.max
        if cell.count > 0 { (kind, next) = lookup(cell, t) }
        var blocked = kind.isBlocking
        if !kind.isManaged {
            let strictNow = lookup(strict[p], t)
            blocked = strictNow.kind.isBlocking
            if strictNow.next < next { next = strictNow.next }
        }
        var ttl = Decision.uncapped
        if next != .max {
            let left = (next &- t) / 1000 // floor: never outlive the change
            ttl = left < 1 ? 1 : (left >= Int64(UInt32.max) ? UInt32.max - 1 : UInt32(truncatingIfNeeded: left))
        }
        if blocked, ttl > Decision.blockedTTLCap { ttl = Decision.blockedTTLCap }
        return Decision(blocked: blocked, managed: kind.isManaged, ttlCap: ttl, kind: kind, changeAt: next)
    }

    /// The state of entry index `entry` for `profile` at `now`; `.none` for an entry no rule names,
    /// an unknown profile or index, and (failing closed) `.blocked` for a ruled entry past the horizon.
    @inlinable public func kind(profile: Int, entry: Int, now: Instant) -> EntryState.Kind {
        guard profile >= 0, profile < profileCount, entry >= 0, entry < entryCount else { return .none }
        let cell = entryCells[profile &* entryCount &+ entry]
        guard cell.count > 0 else { return .none }
        if now.millisecondsSince1970 >= horizonMilliseconds { return .blocked }
        return lookup(cell, now.millisecondsSince1970).kind
    }

    /// Whether a strict curfew is in force for `profile` at `now` (every name but the allow list blocked).
    @inlinable public func isStrictCurfew(profile: Int, now: Instant) -> Bool {
        guard profile >= 0, profile < strict.count else { return false }
        return lookup(strict[profile], now.millisecondsSince1970).kind.isBlocking
    }

    /// Whether the engine should publish a newer snapshot: its refresh is due (the timer is late by
    /// a long way: a suspend, a stuck actor) or the horizon is reached. One comparison.
    @inlinable public func needsRebuild(at now: Instant) -> Bool { now >= refreshAt }
}
