/// What an edit does to a schedule's strength (SPEC §3): weakening needs the cooldown to be over;
/// strengthening is always allowed and starts a new cooldown.
public struct ScheduleChange: Hashable, Sendable {
    /// One way an edit makes a schedule block less.
    public enum Weakening: String, Hashable, Sendable, CaseIterable {
        case disabled
        case deleted
        case entriesRemoved
        /// Shorter or moved window, fewer days, or another time zone.
        case coversLess
        /// Curfew to block, or strict curfew to plain curfew.
        case kindWeakened
    }

    public var weakenings: [Weakening]
    /// Whether the edit adds something: an entry, a minute of coverage, a stronger kind, or enabling.
    public var strengthens: Bool
    /// Whether anything that affects blocking changed at all (a reason-only edit does not).
    public var changesRules: Bool

    /// Compares the schedule before and after an edit. Edits of a disabled schedule weaken nothing:
    /// it was not in force.
    public init(from old: Schedule, to new: Schedule) {
        let oldCoverage = WeekCoverage(old)
        let newCoverage = WeekCoverage(new)
        let sameZone = old.timeZoneID == new.timeZoneID
        var found: [Weakening] = []
        if old.enabled {
            if !new.enabled { found.append(.disabled) }
            if !old.entries.isSubset(of: new.entries) && !new.kind.isStrict { found.append(.entriesRemoved) }
            if !sameZone || !oldCoverage.isSubset(of: newCoverage) { found.append(.coversLess) }
            if new.kind < old.kind { found.append(.kindWeakened) }
        }
        weakenings = found
        strengthens = new.enabled && (
            !old.enabled
                || !new.entries.isSubset(of: old.entries)
                || !sameZone || !newCoverage.isSubset(of: oldCoverage)
                || new.kind > old.kind
        )
        changesRules = old.start != new.start || old.end != new.end || old.days != new.days
            || !sameZone || old.entries != new.entries || old.kind != new.kind || old.enabled != new.enabled
    }

    /// Deleting: the strongest weakening there is, unless the schedule was already disabled.
    public static func deletion(of schedule: Schedule) -> ScheduleChange {
        ScheduleChange(weakenings: schedule.enabled ? [.deleted] : [], strengthens: false, changesRules: true)
    }

    private init(weakenings: [Weakening], strengthens: Bool, changesRules: Bool) {
        self.weakenings = weakenings
        self.strengthens = strengthens
        self.changesRules = changesRules
    }

    public var weakens: Bool { !weakenings.isEmpty }
}
