/// Daily allowances (SPEC §4a): granted per local day from the policy's `allowances`, as one batch
/// per allowance that only its entries may draw on, spent before earned credit (`debit`), and
/// reset at the next local midnight (`expireBatches`). Every grant, change and reset is an
/// `allowance` ledger row, so the balance still equals the sum of the ledger.
extension Wallet {
    /// Brings today's allowance grants in line with the policy at `x`: a new day grants each
    /// allowance's seconds for its weekday; a change the same day grants the difference when it
    /// was raised and takes back what is left, up to the difference, when it was lowered.
    /// - Returns: whether credit was taken back (a running spend may then end sooner).
    mutating func grantAllowances(at x: Instant, into out: inout CreditOutcome) -> Bool {
        let day = calendar.day(of: x)
        if let current = state.allowanceDay {
            // Never for an earlier day (a zone moved west by a reload): that would grant twice.
            if day < current { return false }
            if day > current {
                state.allowanceDay = day
                state.allowanceGranted = [:]
            }
        } else {
            guard !policy.allowances.isEmpty else { return false }
            state.allowanceDay = day
        }
        let weekday = calendar.weekday(of: day)
        var wanted: [String: Int64] = [:]
        for a in policy.allowances { wanted[a.key, default: 0] += a.seconds(onWeekday: weekday) }
        var tookBack = false
        for key in Set(wanted.keys).union(state.allowanceGranted.keys).sorted() {
            let target = wanted[key] ?? 0
            let granted = state.allowanceGranted[key] ?? 0
            let entries = Allowance.entries(ofKey: key)
            let words = Self.allowanceWords(key)
            if target > granted {
                let add = target - granted
                if let i = state.batches.firstIndex(where: { $0.allowanceKey == key && $0.origin == .allowance(day) }) {
                    state.batches[i].remaining += add
                } else {
                    insert(CreditBatch(origin: .allowance(day), createdAt: x, expiresAt: calendar.nextMidnight(after: x),
                                       remaining: add, allowanceKey: key))
                }
                out.rows.append(LedgerRow(time: x, deltaSeconds: add, reason: .allowance, note: "allowance of \(day) for \(words)"))
                out.events.append(CreditEvent(time: x, entry: entries.count == 1 ? entries[0] : nil,
                                              kind: .allowanceGranted(seconds: add, entries: entries)))
            } else if target < granted {
                var taken: Int64 = 0
                if let i = state.batches.firstIndex(where: { $0.allowanceKey == key && $0.origin == .allowance(day) }) {
                    taken = min(granted - target, state.batches[i].remaining)
                    state.batches[i].remaining -= taken
                    if state.batches[i].remaining == 0 { state.batches.remove(at: i) }
                }
                if taken > 0 {
                    out.rows.append(LedgerRow(time: x, deltaSeconds: -taken, reason: .allowance,
                                              note: "allowance of \(day) for \(words) lowered"))
                    out.events.append(CreditEvent(time: x, entry: entries.count == 1 ? entries[0] : nil,
                                                  kind: .allowanceGranted(seconds: -taken, entries: entries)))
                    tookBack = true
                }
            }
            if target > 0 { state.allowanceGranted[key] = target } else { state.allowanceGranted[key] = nil }
        }
        return tookBack
    }

    /// The refusal for a spend on `entry` when today's allowance covering it is used up and no
    /// other credit is left (SPEC §4a): it says when the allowance is granted again.
    func allowanceUsedUp(for entry: EntryID, at t: Instant) -> Refusal? {
        guard state.allowanceDay == calendar.day(of: t) else { return nil }
        let today = state.allowanceGranted.filter { $0.value > 0 && Allowance.covers(key: $0.key, entry) }.values.reduce(0, +)
        guard today > 0 else { return nil }
        // The refusal says when the allowance starts again (SPEC §4a); earning may open it sooner.
        let resets = nextAllowanceAt(for: entry, after: t)
        return Refusal(rule: .allowanceUsedUp, subject: entry.rawValue, opensAt: resets ?? nextCreditAt,
                       message: "Today's \(SpanWords.describe(seconds: today)) allowance for \(entry) is used up"
                           + (resets == nil ? "." : "; a fresh one starts at local midnight of the next day it applies, never carried over.")
                           + " Credit you earn can open it sooner.")
    }

    static func allowanceWords(_ key: String?) -> String {
        guard let key, key != "*" else { return "any entry" }
        return key.replacingOccurrences(of: ",", with: ", ")
    }

    /// When the allowance covering `entry` is next granted anew: the first local midnight after `t`
    /// that starts a day on which an allowance covering it gives time. Nil when none does.
    public func nextAllowanceAt(for entry: EntryID?, after t: Instant) -> Instant? {
        let covering = policy.allowances.filter { $0.covers(entry) }
        guard !covering.isEmpty else { return nil }
        var day = calendar.day(of: t)
        for _ in 0..<7 {
            day = calendar.adding(days: 1, to: day)
            let weekday = calendar.weekday(of: day)
            if covering.contains(where: { $0.seconds(onWeekday: weekday) > 0 }) { return calendar.startOfDay(day) }
        }
        return nil
    }
}
