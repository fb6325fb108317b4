/// Per-entry wallets (SPEC §4 "advanced") and administrator adjustments.
extension Wallet {
    /// Sets `seconds` of global credit aside for `entry` (oldest first). Earmarked credit keeps
    /// its origin and expiry, so earmarking is never a way around rollover. The balance does not
    /// change, so there is no ledger row; an event records it.
    /// - Throws: `.invalid` when per-entry wallets are off or `seconds` is not positive;
    ///   `.refused(.insufficientCredit)` when the global wallet holds less.
    public mutating func earmark(_ seconds: Int64, for entry: EntryID, at t: Instant) throws(CreditError) -> CreditOutcome {
        guard knobs.perEntryWallets else {
            throw .invalid("Per-entry wallets are off. Set per_entry_wallets = true (or use the flexible preset) to set credit aside for \(entry).")
        }
        guard seconds > 0 else { throw .invalid("Earmark a positive number of seconds (got \(seconds)).") }
        var next = self
        var out = CreditOutcome()
        next.run(to: t, into: &out)
        // An allowance is the owner's, for its own entries (SPEC §4a): never set aside elsewhere.
        let global = next.state.batches.reduce(0) { $0 + ($1.allowanceKey == nil && $1.earmark == nil ? $1.remaining : 0) }
        guard seconds <= global else {
            throw .refused(Refusal(rule: .insufficientCredit, subject: entry.rawValue, opensAt: next.nextCreditAt,
                                   message: "The main wallet holds \(SpanWords.describe(seconds: global)); that is the most you can set aside now."))
        }
        var left = seconds
        var result: [CreditBatch] = []
        for var b in next.state.batches {
            if left > 0, b.earmark == nil, b.allowanceKey == nil {
                let n = min(left, b.remaining)
                left -= n
                var tagged = b
                tagged.remaining = n
                tagged.earmark = entry
                result.append(tagged)
                b.remaining -= n
                if b.remaining == 0 { continue }
            }
            result.append(b)
        }
        next.state.batches = result
        let now = next.state.asOf
        out.events.append(CreditEvent(time: now, entry: entry, kind: .earmarked(seconds: seconds)))
        next.refreshSpendEnd(at: now, into: &out)
        self = next
        return out
    }

    /// Returns everything earmarked for `entry` to the global wallet.
    public mutating func releaseEarmark(for entry: EntryID, at t: Instant) -> CreditOutcome {
        var out = CreditOutcome()
        run(to: t, into: &out)
        let seconds = earmarkedSeconds(for: entry)
        guard seconds > 0 else { return out }
        for i in state.batches.indices where state.batches[i].earmark == entry { state.batches[i].earmark = nil }
        out.events.append(CreditEvent(time: state.asOf, entry: entry, kind: .earmarkReleased(seconds: seconds)))
        return out
    }

    /// An administrator's correction, written as an `adjust` row with `note`. Added credit never
    /// expires (like starter credit); removed credit comes from the oldest first, earmarks included.
    /// - Throws: `.invalid` for zero or for removing more than the balance (it would go negative).
    public mutating func adjust(_ seconds: Int64, note: String, at t: Instant) throws(CreditError) -> CreditOutcome {
        guard seconds != 0 else { throw .invalid("An adjustment of 0 s changes nothing; give a positive or negative number of seconds.") }
        var next = self
        var out = CreditOutcome()
        next.run(to: t, into: &out)
        let now = next.state.asOf
        if seconds > 0 {
            next.insert(CreditBatch(origin: .adjustment, createdAt: now, expiresAt: nil, remaining: seconds))
        } else {
            // Today's allowance is not the person's credit to take (SPEC §4a): it resets at midnight.
            let allowances = next.state.batches.filter { $0.allowanceKey != nil }
            let balance = next.balanceSeconds - allowances.reduce(0) { $0 + $1.remaining }
            guard -seconds <= balance else {
                throw .invalid("The balance is \(SpanWords.describe(seconds: balance)); an adjustment can remove at most that much.")
            }
            var all = next
            all.state.batches.removeAll { $0.allowanceKey != nil }
            all.policy.knobs.perEntryWallets = false // take from every batch, earmarks included
            all.debit(-seconds, for: nil)
            next.state.batches = all.state.batches + allowances
        }
        out.rows.append(LedgerRow(time: now, deltaSeconds: seconds, reason: .adjust, note: note))
        out.events.append(CreditEvent(time: now, kind: .adjusted(seconds: seconds)))
        next.refreshSpendEnd(at: now, into: &out)
        self = next
        return out
    }
}
