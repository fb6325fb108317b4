/// Why a rule said no, and when it will say yes. Every refused operation carries one, so the CLI
/// can print "instagram is in cooldown until 21:42 — 1 h 12 min" (SPEC §3, §13 exit code 1).
public struct Refusal: Error, Hashable, Sendable, Codable {
    public enum Rule: String, Hashable, Sendable, Codable, CaseIterable {
        case cooldown            // SPEC §3
        case curfewEditLock      // SPEC §2 edit lock
        case curfew              // SPEC §2, §4, §5: nothing opens during a curfew
        case bypassLockout       // SPEC §5: twice the bypass length
        case peeksUsedUp         // SPEC §5
        case tokensUsedUp        // SPEC §5: at most 5 per calendar month
        case insufficientCredit  // SPEC §4
        case entryDailySpendCap  // SPEC §4 per-entry daily cap
        case invalidSchedule     // SPEC §2 validation (start == end, curfew > 960 min, …)
        case notBlocked          // nothing to open or stop
        case grantRunning        // SPEC §4, §5: a peek or token already opens the entry; no second charge
        case requestsPending     // SPEC §9a: a profile's unanswered requests for time are capped
        case role                // SPEC §11: the caller's role on the profile does not allow the action
        case allowanceUsedUp     // SPEC §4a: today's allowance is spent and no earned credit is left
        case paused              // SPEC §5a: an owner paused the profile; nothing opens until it ends
    }

    public var rule: Rule
    /// The entry or schedule the rule protects, when there is one.
    public var subject: String?
    /// The instant the operation becomes possible again; nil when waiting will not help
    /// (for example a schedule that is invalid as written).
    public var opensAt: Instant?
    /// The person's own reason attached to the block or schedule, shown in every refusal (SPEC §2).
    public var reason: String?
    /// One supportive, numbers-first sentence for people, without the time (the CLI formats times
    /// in the person's zone).
    public var message: String

    public init(rule: Rule, subject: String? = nil, opensAt: Instant? = nil, reason: String? = nil, message: String) {
        self.rule = rule
        self.subject = subject
        self.opensAt = opensAt
        self.reason = reason
        self.message = message
    }
}
