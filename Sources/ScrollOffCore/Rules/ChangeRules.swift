/// The checks every weakening operation passes before it is applied: the cooldown (SPEC §3) and the
/// curfew edit lock (SPEC §2). All take `now` from the trusted clock (SPEC §11), which never runs
/// backwards, so setting the system clock back can only make a lock last longer, never shorter.
///
/// Locks apply to every caller, root included (SPEC §11).
public enum ChangeRules {
    /// SPEC §2: "from 30 minutes before it starts until it ends".
    public static let curfewLockLead = Span.minutes(30)

    // MARK: Blocks

    /// Blocks an entry around the clock, or re-blocks it; either starts a cooldown of `cooldown`
    /// (never shortening one already running). A new reason replaces the old one only when given.
    public static func block(
        _ entry: EntryID, existing: Block?, at now: Instant, cooldown: Span, reason: String? = nil
    ) -> Block {
        let until = max(existing?.cooldownUntil ?? now, now + cooldown)
        return Block(
            entry: entry, created: existing?.created ?? now, cooldownUntil: until,
            reason: reason ?? existing?.reason
        )
    }

    /// Refuses `unblock` while the block's cooldown runs.
    public static func checkUnblock(_ block: Block, at now: Instant) throws(Refusal) {
        guard now < block.cooldownUntil else { return }
        throw Refusal(
            rule: .cooldown, subject: block.entry.rawValue, opensAt: block.cooldownUntil, reason: block.reason,
            message: "\(block.entry) stays blocked for \(SpanText.describe(block.cooldownUntil - now)) more: "
                + "a new block has a cooldown, so it holds through the urge to undo it."
        )
    }

    // MARK: Schedules

    /// Validates a new schedule and, if it is enabled, starts its cooldown.
    public static func add(_ schedule: Schedule, at now: Instant, cooldown: Span) throws(Refusal) -> Schedule {
        do { try schedule.validate() } catch { throw error.refusal }
        var added = schedule
        if added.enabled { added.cooldownUntil = max(schedule.cooldownUntil ?? now, now + cooldown) }
        return added
    }

    /// The end of the curfew edit lock in force at `now`, or nil when the schedule may be edited.
    ///
    /// The lock covers `[start - 30 min, end)` of every window of an enabled curfew. When the next
    /// window's lock begins before this one ends, the lock runs on, so the instant returned is when
    /// editing really opens again.
    public static func curfewEditLock(of schedule: Schedule, at now: Instant) -> Instant? {
        guard schedule.enabled, schedule.kind.isCurfew else { return nil }
        let windows = schedule.occurrences(from: now, to: now + .hours(24 * 9))
        var lockedUntil: Instant?
        for o in windows {
            let lockStart = o.start - curfewLockLead
            let reference = lockedUntil ?? now
            if lockStart <= reference, reference < o.end {
                lockedUntil = o.end // begins the lock, or chains it when the next lock starts before this end
            } else if lockStart > reference {
                break // windows come in order: every later one starts later still
            }
        }
        return lockedUntil
    }

    /// Checks an edit of `old` into `new` (both as the person sees them) and returns `new` with its
    /// cooldown updated. Refuses, in this order: an invalid result; any edit of a curfew inside its
    /// edit lock; a weakening inside the cooldown. A strengthening edit starts a new cooldown.
    /// An edit that changes no rule (only the name or the reason) blocks nothing less and passes even
    /// inside the lock, so a person can always put their reason into words.
    public static func edit(from old: Schedule, to new: Schedule, at now: Instant, cooldown: Span) throws(Refusal) -> Schedule {
        do { try new.validate() } catch { throw error.refusal }
        let change = ScheduleChange(from: old, to: new)
        var result = new
        result.cooldownUntil = old.cooldownUntil
        guard change.changesRules else { return result }
        try checkEditLock(old, at: now)
        if change.weakens { try checkCooldown(old, change: change, at: now) }
        if change.strengthens { result.cooldownUntil = max(old.cooldownUntil ?? now, now + cooldown) }
        return result
    }

    /// Checks that `schedule` may be deleted now.
    public static func checkDelete(_ schedule: Schedule, at now: Instant) throws(Refusal) {
        try checkEditLock(schedule, at: now)
        let change = ScheduleChange.deletion(of: schedule)
        if change.weakens { try checkCooldown(schedule, change: change, at: now) }
    }

    static func checkEditLock(_ schedule: Schedule, at now: Instant) throws(Refusal) {
        guard let until = curfewEditLock(of: schedule, at: now) else { return }
        throw Refusal(
            rule: .curfewEditLock, subject: schedule.name, opensAt: until, reason: schedule.reason,
            message: "The curfew “\(schedule.name)” is about to start or running, so it is locked; "
                + "you can change it again in \(SpanText.describe(until - now)), when it ends."
        )
    }

    static func checkCooldown(_ schedule: Schedule, change: ScheduleChange, at now: Instant) throws(Refusal) {
        guard let until = schedule.cooldownUntil, now < until else { return }
        let what = change.weakenings.map(\.phrase).joined(separator: ", ")
        throw Refusal(
            rule: .cooldown, subject: schedule.name, opensAt: until, reason: schedule.reason,
            message: "“\(schedule.name)” was set up or strengthened recently, so it can't be loosened (\(what)) "
                + "for \(SpanText.describe(until - now)) more. Making it stronger is always possible."
        )
    }
}

extension ScheduleChange.Weakening {
    /// How a refusal names what was asked.
    var phrase: String {
        switch self {
        case .disabled: return "disabling"
        case .deleted: return "deleting"
        case .entriesRemoved: return "removing entries"
        case .coversLess: return "covering less time"
        case .kindWeakened: return "a softer kind"
        }
    }
}

extension ChangeRules {
    /// A focus session is its own cooldown (SPEC §2, §3): ending it early is refused until it ends.
    public static func checkEndFocus(_ session: FocusSession, at now: Instant) throws(Refusal) {
        guard session.isActive(at: now) else { return }
        throw Refusal(
            rule: .cooldown, subject: session.entries.sorted().map(\.rawValue).joined(separator: ","),
            opensAt: session.end, reason: session.reason,
            message: "This focus session has \(SpanText.describe(session.end - now)) to go; it ends by itself, and you can do this then."
        )
    }
}
