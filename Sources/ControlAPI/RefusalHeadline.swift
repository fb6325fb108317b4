import Foundation
import ScrollOffCore

/// The headline of a rule's refusal (SPEC §13: "the message says which rule and until when"), with
/// the local time it opens again and how long that is: "instagram is in cooldown until 21:42 —
/// 1 h 12 min". One wording for the CLI (`RefusalWords`) and the household page (SPEC §9a).
public enum RefusalHeadline {
    /// Nil when the refusal names no time it opens again.
    public static func text(_ refusal: ControlError, now: Instant) -> String? {
        guard let opensAt = refusal.opensAt.map(Instant.init(date:)) else { return nil }
        let when = TimeWords.until(opensAt, now: now)
        let subject = refusal.subject ?? "This"
        switch refusal.refusalRule {
        case .cooldown: return "\(subject) is in cooldown until \(when)"
        case .curfewEditLock: return "The curfew “\(subject)” is locked until \(when)"
        case .curfew: return "\(subject) is in curfew until \(when)"
        case .bypassLockout: return "\(subject) can be opened again at \(when)"
        case .peeksUsedUp: return "Peeks come back at \(when)"
        case .tokensUsedUp: return "New tokens arrive at \(when)"
        case .grantRunning: return "\(subject) is already open until \(when)"
        case .allowanceUsedUp: return "\(subject)'s allowance starts again at \(when)"
        case .paused: return "\(subject) is paused until \(when)"
        case .insufficientCredit, .entryDailySpendCap, .invalidSchedule, .notBlocked, .requestsPending, .role, nil:
            return "Opens again at \(when)"
        }
    }
}

extension Exercise {
    /// The "try this first" exercise offered today (SPEC §5 step 3): a different one each day, the
    /// same all day, so it becomes familiar. The CLI and the household page offer the same one.
    public static func ofTheDay(_ now: Date) -> Exercise {
        let day = Int(now.timeIntervalSince1970 / 86_400)
        return catalogue[day % catalogue.count]
    }
}

extension Refusal.Rule {
    /// `curfewEditLock` → `curfew_edit_lock`: the wire spells every name in snake_case (the stored
    /// events keep the raw value, so it is not changed there). Computed from the case, so a new
    /// rule has its wire name without a table to keep.
    public var wireName: String {
        var out = ""
        for character in rawValue {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// The rule a wire name stands for; nil for a name this build does not know (a newer helper).
    public init?(wireName: String) {
        guard let rule = Self.allCases.first(where: { $0.wireName == wireName }) else { return nil }
        self = rule
    }
}

extension ControlError {
    /// The refusal's rule as the typed value both sides declare; nil when no rule refused or the
    /// helper is newer than this client.
    public var refusalRule: Refusal.Rule? { rule.flatMap(Refusal.Rule.init(wireName:)) }
}
