import Foundation
import ScrollOffCore

extension EventKind {
    /// SPEC §12: a rule was made, changed or removed (block, schedule, focus, list, profile,
    /// knobs), with who did it; the payload is a `RuleChangeRecord`.
    public static let ruleChange: EventKind = "ruleChange"
    /// SPEC §12: a peek, use or token the rules refused; the payload is a `RefusalRecord`.
    /// (Refused loosenings keep their own kind, `editRefused`, with the same payload.)
    public static let bypassRefused: EventKind = "bypassRefused"
}

/// The payload of a `ruleChange` event: what changed, who changed it, and the rule in words.
public struct RuleChangeRecord: Hashable, Sendable, Codable {
    /// What happened, one of the `Change` names (`block`, `scheduleAdded`, …).
    public var change: String
    /// Who made the change: "alice (uid 1000)", "web owner bob (uid 1001)", "the configuration file".
    public var actor: String
    /// The rule after the change (before it, for a removal), in words.
    public var rule: String
    /// The rule before an edit, in words.
    public var before: String?
    /// The entries the rule names, sorted.
    public var entries: [String]

    /// The kinds of change, each its own name so insights can count them.
    public enum Change: String, CaseIterable, Sendable {
        case block, unblock, blockRenewed
        case scheduleAdded, scheduleEdited, scheduleRemoved
        case focusStarted, focusEnded
        case listAdded, listRemoved
        case profileAdded, profileRemoved, profileClients, profileHousehold, timeZone, preset, knobs
        /// SPEC §5a: an owner paused a profile, lifted the pause early, or it ended by itself.
        case paused, resumed, pauseEnded
        /// SPEC §4a: a daily allowance set, changed or removed.
        case allowanceSet, allowanceCleared
    }

    public init(change: Change, actor: String, rule: String, before: String? = nil, entries: [String] = []) {
        self.change = change.rawValue
        self.actor = actor
        self.rule = rule
        self.before = before
        self.entries = entries
    }
}

/// The payload of a `bypassRefused` or `editRefused` event: the refusal exactly as the person got
/// it (its rule, subject, the time it opens again, their reason and the sentence), what they
/// tried, who asked, and — when attempts came in a burst — how many and the last one's time.
/// The `Refusal` fields sit at the top level, so the payload still decodes as a `Refusal`.
public struct RefusalRecord: Hashable, Sendable, Codable {
    public var rule: Refusal.Rule
    public var subject: String?
    public var opensAt: Instant?
    public var reason: String?
    public var message: String
    /// "peek", "use", "token", "unblock", "schedule edit", "schedule rm", "lists rm".
    public var action: String
    public var actor: String
    /// The curfew schedule in force that refused it, for a curfew refusal.
    public var curfew: String?
    /// Attempts this row stands for (1 unless a burst was coalesced into it).
    public var count: Int
    /// The last attempt's time (the row's own time is the first's).
    public var lastAt: Instant
    /// Attempts of another kind folded into this row because the hourly row limit was reached.
    public var folded: Int

    public init(_ refusal: Refusal, action: String, actor: String, curfew: String? = nil, at time: Instant) {
        rule = refusal.rule
        subject = refusal.subject
        opensAt = refusal.opensAt
        reason = refusal.reason
        message = refusal.message
        self.action = action
        self.actor = actor
        self.curfew = curfew
        count = 1
        lastAt = time
        folded = 0
    }

    public var refusal: Refusal { Refusal(rule: rule, subject: subject, opensAt: opensAt, reason: reason, message: message) }
}

extension StoredEvent {
    /// A rule change (SPEC §12). Machine-wide when `profile` is nil (a list, a removed profile).
    public init(_ change: RuleChangeRecord, profile: String?, entry: EntryID? = nil, at time: Instant, message: String) {
        self.init(profile: profile, time: time, kind: .ruleChange, entry: entry, message: message, payload: JSONCoding.string(change))
    }

    /// A refused bypass or loosening (SPEC §12): the row's message is the refusal's own sentence.
    public init(_ record: RefusalRecord, kind: EventKind, profile: String, at time: Instant) {
        // Only a bypass's subject is an entry; a refused edit's may be a schedule's name.
        self.init(profile: profile, time: time, kind: kind, entry: kind == .bypassRefused ? record.subject.map { EntryID($0) } : nil,
                  message: record.message, payload: JSONCoding.string(record))
    }

    /// The payload as a rule change, when it is one.
    public var ruleChange: RuleChangeRecord? {
        guard kind == .ruleChange, let payload else { return nil }
        return try? JSONDecoder().decode(RuleChangeRecord.self, from: Data(payload.utf8))
    }

    /// The payload as a refusal record, for `bypassRefused` and `editRefused` rows.
    public var refusalRecord: RefusalRecord? {
        guard kind == .bypassRefused || kind == .editRefused, let payload else { return nil }
        return try? JSONDecoder().decode(RefusalRecord.self, from: Data(payload.utf8))
    }
}

extension RefusalRecord {
    /// The payload text, as `StoredEvent(_:kind:profile:at:)` writes it.
    public var payloadText: String { JSONCoding.string(self) }
}
