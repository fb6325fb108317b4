/// A profile's rules evaluated at one instant: what the snapshot is built from.
public struct ProfileState: Sendable {
    /// One status per entry index, in the order of the entries the states were evaluated for.
    public var entries: [EntryStatus]
    /// The end of the strict curfew in force, nil when none is (SPEC §2 `--strict`).
    public var strictCurfewUntil: Instant?
    /// When a strict curfew next starts or ends; every name of the profile changes then.
    public var strictCurfewNextEdge: Instant?
    public var evaluatedAt: Instant

    public init(entries: [EntryStatus], strictCurfewUntil: Instant?, strictCurfewNextEdge: Instant?, evaluatedAt: Instant) {
        self.entries = entries
        self.strictCurfewUntil = strictCurfewUntil
        self.strictCurfewNextEdge = strictCurfewNextEdge
        self.evaluatedAt = evaluatedAt
    }

    public var isStrictCurfew: Bool { strictCurfewUntil != nil }
}

extension ProfileRules {
    /// Evaluates every entry of the catalog, in catalog order (index = the matcher's entry index).
    public func evaluate(entries catalog: [EntryID], at t: Instant) -> ProfileState {
        ProfileState(
            entries: catalog.map { status(of: $0, at: t) },
            strictCurfewUntil: strictCurfew(at: t)?.occurrence.end,
            strictCurfewNextEdge: nextStrictCurfewEdge(after: t),
            evaluatedAt: t
        )
    }
}
