/// Something the wallet or the ladder did that people or insights care about but that is not a
/// change of balance (or that deserves words beyond its ledger row). Stored in the events table.
public struct CreditEvent: Hashable, Sendable, Codable {
    public enum GrantEndReason: String, Hashable, Sendable, Codable {
        /// `scrolloff stop`, or a new `use` taking over from the running one.
        case stopped
        /// A spend reached zero credit (or the per-entry daily cap): the block returns at once.
        case fundsRanOut
        /// A spend reached its `--for` length.
        case limitReached
        /// A peek or token ran its full length.
        case elapsed
        /// A curfew covering the entry began while a spend ran (SPEC §2, §4: nothing opens it then,
        /// so nothing is charged for it).
        case curfew
        /// The block the spend opened ended (a block window or focus session ran out): the entry is
        /// open without credit, so the spend stops charging.
        case unblocked
        /// The helper stopped (a crash, kill -9, a power cut, a restart) while a spend ran: it is
        /// charged up to the last instant the helper is known to have run and ended there, since
        /// nothing the helper did not enforce is charged (SPEC §4, §11).
        case helperStopped
        /// The trusted clock was moved back to the system clock (SPEC §11 clock recovery): a grant
        /// opened on the wrong clock would otherwise run on by the whole correction.
        case clockCorrected
    }

    public enum Kind: Hashable, Sendable, Codable {
        case earned(seconds: Int64)
        /// SPEC §4: "excess discarded, with an event saying so".
        case dailyCapReached(discardedSeconds: Int64, capSeconds: Int64)
        case expired(seconds: Int64, earnedOn: LocalCalendar.Day?)
        case starterCredit(seconds: Int64)
        case adjusted(seconds: Int64)
        case earmarked(seconds: Int64)
        case earmarkReleased(seconds: Int64)
        /// SPEC §11: the clock jumped back; no earning until `until`.
        case earningFrozen(until: Instant)
        case grantOpened(Grant)
        /// A running spend's end moved earlier (credit expired or was used elsewhere).
        case grantShortened(Grant)
        /// The grant as it ended: `end` is the instant it closed.
        case grantEnded(Grant, reason: GrantEndReason)
        case peekUsed(paid: Bool, peeksLeftToday: Int)
        case tokenUsed(tokensLeftThisMonth: Int)
        /// SPEC §5 step 3: the "try this first" outcome.
        case exercise(ExerciseRecord)
        /// SPEC §4a: an owner's daily allowance granted for the day (or changed: the difference,
        /// negative when it was lowered); `entries` empty = any entry.
        case allowanceGranted(seconds: Int64, entries: [EntryID])
        /// SPEC §4a: what was left of a day's allowance went at midnight (it never rolls over).
        case allowanceReset(seconds: Int64, entries: [EntryID])
    }

    public var time: Instant
    public var entry: EntryID?
    public var kind: Kind

    public init(time: Instant, entry: EntryID? = nil, kind: Kind) {
        self.time = time
        self.entry = entry
        self.kind = kind
    }

    /// One supportive, numbers-first sentence (SPEC §7: celebrate, never shame).
    public var message: String {
        func words(_ s: Int64) -> String { SpanWords.describe(seconds: s) }
        let name = entry?.rawValue ?? "everything"
        switch kind {
        case .earned(let s):
            return "+\(words(s)) earned for an hour away. Nice work."
        case .dailyCapReached(let discarded, let cap):
            return "Today's \(words(cap)) of earned credit is full; \(words(discarded)) more was not added. The cap resets at midnight."
        case .expired(let s, let day):
            let from = day.map { " earned on \($0)" } ?? ""
            return "\(words(s)) of credit\(from) expired at midnight."
        case .starterCredit(let s):
            return "+\(words(s)) starter credit to begin with. It never expires."
        case .adjusted(let s):
            return "Balance adjusted by \(s >= 0 ? "+" : "")\(words(s))."
        case .earmarked(let s):
            return "\(words(s)) set aside for \(name)."
        case .earmarkReleased(let s):
            return "\(words(s)) set aside for \(name) went back to the main wallet."
        case .earningFrozen:
            return "The system clock moved back, so earning pauses for the rest of the day. Your balance is safe."
        case .grantOpened(let g):
            return "\(g.entry) is open for \(SpanWords.describe(g.end - g.start))\(g.task.map { " — \($0)" } ?? "")."
        case .grantShortened(let g):
            return "\(g.entry) now closes after \(SpanWords.describe(g.end - g.start)) in total, when the credit runs out."
        case .grantEnded(let g, let reason):
            switch reason {
            case .stopped: return "\(g.entry) closed after \(SpanWords.describe(g.end - g.start)). Well stopped."
            case .fundsRanOut: return "\(g.entry) closed: the credit for it is used up."
            case .limitReached: return "\(g.entry) closed after the \(SpanWords.describe(g.end - g.start)) you chose."
            case .elapsed: return "\(g.entry) closed again after \(SpanWords.describe(g.end - g.start))."
            case .curfew: return "\(g.entry) closed when its curfew began, after \(SpanWords.describe(g.end - g.start)); nothing is charged while the curfew lasts."
            case .unblocked: return "\(g.entry) is no longer blocked, so the spend ended after \(SpanWords.describe(g.end - g.start)); nothing more is charged."
            case .helperStopped: return "\(g.entry) closed because the helper stopped; it was charged until then and nothing for the time the helper was down. `scrolloff use \(g.entry)` opens it again."
            case .clockCorrected: return "\(g.entry) closed because the trusted clock was set back to the right time; nothing more is charged. Open it again if you still need it."
            }
        case .peekUsed(let paid, let left):
            return "\(paid ? "Paid" : "Free") peek at \(name); \(left) peek\(left == 1 ? "" : "s") left today."
        case .tokenUsed(let left):
            return "Emergency token used for \(name); \(left) left this month."
        case .allowanceGranted(let s, let entries):
            let what = entries.isEmpty ? "any entry" : entries.map(\.rawValue).joined(separator: ", ")
            return s >= 0 ? "Today's allowance for \(what): \(words(s)) to use without earning it."
                : "Today's allowance for \(what) was lowered by \(words(-s))."
        case .allowanceReset(let s, let entries):
            let what = entries.isEmpty ? "any entry" : entries.map(\.rawValue).joined(separator: ", ")
            return "\(words(s)) of the allowance for \(what) went unused yesterday; a fresh one starts today."
        case .exercise(let record):
            switch record.outcome {
            case .completed: return "Exercise done: \(record.exerciseID)."
            case .skipped: return "Exercise skipped this time."
            case .bypassAvoided: return "You did \(record.exerciseID) and chose not to open \(name). That counts."
            }
        }
    }
}
