import ControlAPI
import Foundation
import ScrollOffCore

/// How a rule's refusal reads (SPEC §13: "the message says which rule and until when"): a
/// headline with the local time it opens again and how long that is, then the helper's own
/// explanation, then the person's reason for the rule, when they gave one.
///
///     instagram is in cooldown until 21:42 — 1 h 12 min
///     instagram stays blocked for 1 h 12 min more: a new block has a cooldown, …
///     Your reason: “evenings are for the kids”
enum RefusalWords {
    static func lines(_ refusal: ControlError, now: Instant) -> [String] {
        var lines: [String] = []
        if let headline = headline(refusal, now: now) { lines.append(Terminal.bold(headline)) }
        lines.append(refusal.message)
        if let reason = refusal.reason, !reason.isEmpty { lines.append("Your reason: “\(reason)”") }
        return lines
    }

    static func headline(_ refusal: ControlError, now: Instant) -> String? {
        RefusalHeadline.text(refusal, now: now)
    }
}
