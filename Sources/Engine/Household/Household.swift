import Foundation
import ScrollOffCore
import Store

/// The household's rules that need no engine state (SPEC §9a, §13): the bounds of an
/// adjustment and a note, and the adjustment itself inside a command's working copy, shared by
/// `adjust` and an approved request so both write the same ledger row and event.
enum Household {
    /// The adjustment inside a command, shared by `adjust` and an approval so both write the same
    /// ledger row and event.
    static func adjust(_ w: inout Work, profile: String, seconds: Int64, note: String, by: String) throws(EngineError) -> CreditAdjustment {
        // Checked here too: an approval adjusts by a stored request's seconds, not a request's.
        try checkAdjustment(seconds)
        let i = try index(profile, in: w.profiles)
        var p = w.profiles[i]
        // The balance after it is a sum of the ledger (SPEC §4): checked, not trapped.
        if p.account.wallet.balanceSeconds.addingReportingOverflow(seconds).overflow {
            throw .invalid("The balance of \(p.name) cannot grow by \(seconds) s more; it is at the most this helper can count.")
        }
        let out: CreditOutcome
        do throws(CreditError) { out = try p.account.adjust(seconds, note: note, at: w.now) } catch { throw EngineError(error) }
        var change = StateChange()
        change.record(out, account: p.account.state, profile: p.name)
        let words = (seconds > 0 ? "+" : "-") + SpanWords.describe(seconds: abs(seconds))
        // The wallet's event says how much; the household's says who and why as well.
        for op in change.operations {
            if case .appendEvent(var e) = op, e.kind == .adjusted {
                e.message = "\(by) adjusted the balance by \(words): \(note)"
                w.change.append(.appendEvent(e))
            } else {
                w.change.append(op)
            }
        }
        w.profiles[i] = p
        let balance = p.account.wallet.balanceSeconds
        return CreditAdjustment(profile: p.name, seconds: seconds, note: note, balanceSeconds: balance,
                                message: "\(words) for \(p.name) (“\(note)”); balance \(SpanWords.describe(seconds: balance)).")
    }

    /// Within a day either way and not 0, checked before any arithmetic: `abs(Int64.min)` traps,
    /// and a trap here takes the household's DNS down with the helper.
    static func checkAdjustment(_ seconds: Int64) throws(EngineError) {
        guard CreditLimits.allowsAdjustment(seconds) else {
            throw .invalid("An adjustment is between 1 s and \(SpanWords.describe(seconds: HelperEngine.longestHouseholdGrant)) either way, such as +15m or -10m; \(seconds) s is not.")
        }
    }

    /// The profile's index; static so the household commands can use it on a command's copy.
    private static func index(_ name: String, in profiles: [ProfileRuntime]) throws(EngineError) -> Int {
        guard let i = profiles.firstIndex(where: { $0.name == name }) else {
            throw .notFound("There is no profile “\(name)”; profiles: \(profiles.map(\.name).joined(separator: ", ")).")
        }
        return i
    }

    static func note(_ text: String, what: String, example: String) throws(EngineError) -> String {
        let note = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !note.isEmpty else { throw .invalid("Say why in a few words with --note, such as \(example); every \(what) keeps its note in the ledger.") }
        guard note.count <= HelperEngine.longestHouseholdNote else { throw .invalid("Keep the note under \(HelperEngine.longestHouseholdNote) characters.") }
        return note
    }

    /// A small string map as an event payload.
    static func payload(_ fields: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
