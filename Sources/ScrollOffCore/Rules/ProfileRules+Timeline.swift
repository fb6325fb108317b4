/// One stretch of a state on the trusted timeline: from `start` until the next step's start.
public struct TimelineStep: Hashable, Sendable {
    public var start: Instant
    public var kind: EntryState.Kind

    public init(start: Instant, kind: EntryState.Kind) {
        self.start = start
        self.kind = kind
    }
}

/// The states of one entry (or of a profile's strict curfew) over `[from, until)`: what the snapshot
/// answers DNS from, so that a window edge or a grant end takes effect at its instant whether or not
/// a timer fired (SPEC §3 "Enforcement at every instant").
public struct Timeline: Hashable, Sendable {
    /// The first step starts at `from`; each later step is a change of kind.
    public var steps: [TimelineStep]
    /// Whether some rule still has an edge at or after `until`: then the last step holds only until
    /// the horizon; otherwise it holds for good.
    public var continuesPastHorizon: Bool

    public init(steps: [TimelineStep], continuesPastHorizon: Bool) {
        self.steps = steps
        self.continuesPastHorizon = continuesPastHorizon
    }
}

extension ProfileRules {
    /// `entry`'s states over `[from, until)`, evaluated with ``state(of:at:)`` at every edge of every
    /// rule that touches it: the same rules as `status`, walked once over the horizon. Each
    /// schedule's windows are computed once for the whole span, not once per edge.
    public func timeline(of entry: EntryID, from: Instant, until: Instant) -> Timeline {
        var edges: [Instant] = []
        func add(_ t: Instant) { if t > from && t < until { edges.append(t) } }
        for s in schedules where s.enabled && applies(s, to: entry) {
            for o in s.occurrences(from: from, to: until) { add(o.start); add(o.end) }
        }
        for f in focusSessions where f.entries.contains(entry) { add(f.start); add(f.end) }
        for g in grants where g.entry == entry { add(g.start); add(g.end) }
        if let p = pause { add(p.start); add(p.end) }
        return Timeline(steps: Self.steps(from: from, edges: edges) { state(of: entry, at: $0).kind },
                        continuesPastHorizon: nextEdge(of: entry, after: until - Span(milliseconds: 1)) != nil)
    }

    /// The profile-wide strict curfew over `[from, until)`: `.curfew` while one (or a pause, SPEC
    /// §5a) is in force, `.none` otherwise. It blocks every name of the profile, managed or not
    /// (SPEC §2 `--strict`).
    public func strictCurfewTimeline(from: Instant, until: Instant) -> Timeline {
        var edges: [Instant] = []
        for s in schedules where s.enabled && s.kind.isStrict {
            for o in s.occurrences(from: from, to: until) {
                for t in [o.start, o.end] where t > from && t < until { edges.append(t) }
            }
        }
        if let p = pause {
            for t in [p.start, p.end] where t > from && t < until { edges.append(t) }
        }
        return Timeline(steps: Self.steps(from: from, edges: edges) { strictCurfew(at: $0) != nil || pause(at: $0) != nil ? .curfew : .none },
                        continuesPastHorizon: nextStrictCurfewEdge(after: until - Span(milliseconds: 1)) != nil)
    }

    /// Steps at `from` and at each distinct edge, dropping edges that change nothing.
    static func steps(from: Instant, edges: [Instant], kind: (Instant) -> EntryState.Kind) -> [TimelineStep] {
        var steps = [TimelineStep(start: from, kind: kind(from))]
        var previous: Instant?
        for edge in edges.sorted() where edge != previous {
            previous = edge
            let k = kind(edge)
            if k != steps[steps.count - 1].kind { steps.append(TimelineStep(start: edge, kind: k)) }
        }
        return steps
    }

    /// Every entry some rule of the profile names (blocks, schedules, focus sessions, grants): the only
    /// entries whose state can be anything but `.none`, so the only ones that need a timeline.
    public var entriesWithRules: Set<EntryID> {
        var named = Set(blocks.map(\.entry))
        for s in schedules { named.formUnion(s.entries) }
        for f in focusSessions { named.formUnion(f.entries) }
        for g in grants { named.insert(g.entry) }
        return named
    }
}
