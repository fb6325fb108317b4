/// The heads-up SPEC §2 asks for: "10 minutes before a curfew starts, an event is emitted (curfew
/// starts in 10 minutes, 4 entries will be blocked)". The helper sets a timer at ``remindAt``.
public struct CurfewReminder: Hashable, Sendable {
    /// SPEC §2: 10 minutes ahead.
    public static let lead = Span.minutes(10)

    public var schedule: String
    public var remindAt: Instant
    public var occurrence: Occurrence
    /// Entries named by the curfew; a strict curfew blocks every name besides.
    public var entryCount: Int
    public var strict: Bool
    public var reason: String?

    /// One supportive, numbers-first sentence for whatever shows notifications.
    public var message: String {
        let minutes = (occurrence.start - remindAt).milliseconds / 60_000
        let what = strict
            ? "everything except the always-allow list will be blocked"
            : "\(entryCount) \(entryCount == 1 ? "entry" : "entries") will be blocked"
        let why = reason.map { " (\($0))" } ?? ""
        return "Curfew “\(schedule)”\(why) starts in \(minutes) minutes; \(what). A good moment to wrap up."
    }
}

extension ProfileRules {
    /// The first curfew reminder due strictly after `t`, over all enabled curfews of the profile.
    public func nextCurfewReminder(after t: Instant) -> CurfewReminder? {
        var best: CurfewReminder?
        for s in schedules where s.enabled && s.kind.isCurfew {
            // A window starting within the lead has its reminder in the past; look from t + lead on.
            guard let o = s.occurrences(from: t, to: t + .hours(24 * 9)).first(where: { $0.start - CurfewReminder.lead > t })
            else { continue }
            let remindAt = o.start - CurfewReminder.lead
            if best.map({ remindAt < $0.remindAt }) ?? true {
                best = CurfewReminder(schedule: s.name, remindAt: remindAt, occurrence: o, entryCount: s.entries.count,
                                      strict: s.kind.isStrict, reason: s.reason)
            }
        }
        return best
    }
}
