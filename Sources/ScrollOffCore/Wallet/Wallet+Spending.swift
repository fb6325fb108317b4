/// Spending (SPEC §4): `scrolloff use ENTRY [--for D]` deducts per second until `stop`, `--for`, or
/// zero credit, whichever comes first.
///
/// Fractions of a second: charges are whole seconds with no rounding. Each settlement adds the
/// spend's elapsed milliseconds to `unchargedMilliseconds`, charges the whole seconds in it and
/// keeps the remainder (under 1 s) for the next settlement, of this spend or the next one. So the
/// total ever charged is the floor of the total time ever used: a fraction left at `stop` is never
/// lost and never charged twice. The end instant of a spend is computed with the carry included, so
/// a spend that runs out of credit is charged exactly what it had and leaves no carry.
extension Wallet {
    /// Opens `entry` now, paid per second from its earmark, then the global wallet (oldest first).
    ///
    /// One spend runs at a time per profile: a `use` while another spend runs settles and closes
    /// that one first (the person moves their time, they do not pay twice for the same second).
    /// A `use` on an entry a peek or token opens is refused with the instant that grant ends
    /// (`Refusal.Rule.grantRunning`): grants never stack, so no second is paid twice.
    ///
    /// - Parameters:
    ///   - limit: `--for`; nil spends until the credit (or the per-entry daily cap) runs out.
    ///   - curfewEndsAt: from the rules side: when a curfew covering `entry` now ends, or nil.
    /// - Returns: the outcome, whose `grant.end` is the exact instant the block returns.
    /// - Throws: `.refused` with `.curfew`, `.entryDailySpendCap` or `.insufficientCredit`;
    ///   `.invalid` for a `limit` that is not positive.
    public mutating func use(_ entry: EntryID, for limit: Span? = nil, task: String? = nil, at t: Instant,
                             curfewEndsAt: Instant? = nil) throws(CreditError) -> CreditOutcome {
        if let limit, limit <= .zero {
            throw .invalid("--for must be longer than 0 s (it was \(SpanWords.describe(limit))); leave it out to spend until the credit runs out.")
        }
        var next = self
        var out = CreditOutcome()
        next.run(to: t, into: &out)
        let now = next.state.asOf
        if let c = curfewEndsAt, c > now {
            throw .refused(Refusal(rule: .curfew, subject: entry.rawValue, opensAt: c,
                                   message: "\(entry) is inside a curfew; nothing opens it until the curfew ends."))
        }
        // A peek or token already opens the entry: a spend now would charge for seconds the
        // bypass already gives (or, after a paid peek, charge them twice). It waits for its end.
        if let bypass = next.runningBypass(on: entry) {
            throw .refused(Refusal(rule: .grantRunning, subject: entry.rawValue, opensAt: bypass.end,
                                   message: "\(entry) is already open by your \(bypass.kind.rawValue), and a spend now would charge for "
                                       + "the same minutes. Nothing was charged; run `scrolloff use \(entry)` again once the \(bypass.kind.rawValue) ends."))
        }
        if let running = next.state.spend {
            next.endGrant(id: running.grantID, at: now, reason: .stopped, into: &out)
        }
        let (funds, capLimited) = next.spendableMilliseconds(for: entry)
        guard funds > 0 else {
            if capLimited, let cap = next.knobs.perEntryDailySpendCap {
                throw .refused(Refusal(rule: .entryDailySpendCap, subject: entry.rawValue,
                                       opensAt: next.calendar.nextMidnight(after: now),
                                       message: "\(entry) has had its \(SpanWords.describe(cap)) for today; the cap starts fresh at midnight."))
            }
            if let used = next.allowanceUsedUp(for: entry, at: now) { throw .refused(used) }
            let have = next.availableSeconds(for: entry)
            throw .refused(Refusal(rule: .insufficientCredit, subject: entry.rawValue, opensAt: next.nextCreditAt,
                                   message: "\(SpanWords.describe(seconds: have)) of credit for \(entry) right now. Every \(SpanWords.describe(next.knobs.earnInterval)) away earns \(SpanWords.describe(next.knobs.earnAmount))."))
        }
        var end = now + Span(milliseconds: funds)
        let limitEnd = limit.map { now + $0 }
        if let l = limitEnd, l < end { end = l }
        let g = next.openGrant(kind: .spend, entry: entry, start: now, end: end, task: task, into: &out)
        next.state.spend = WalletState.RunningSpend(grantID: g.id, entry: entry, settledThrough: now, limitEnd: limitEnd)
        self = next
        return out
    }

    /// Ends the running spend at `x` (or at the last settlement, if later) because it stopped buying
    /// anything then (`ProfileRules.spendStops`): a curfew began (nothing opens an entry during one,
    /// SPEC §2, and spending is refused then, §4), or the block ended (the entry is open for free).
    /// Everything due before `x` is processed first; no spend running then (it ran out earlier)
    /// changes nothing.
    public mutating func endSpend(at x: Instant, reason: CreditEvent.GrantEndReason) -> CreditOutcome {
        var out = CreditOutcome()
        run(to: x, into: &out)
        if let running = state.spend { endGrant(id: running.grantID, at: state.asOf, reason: reason, into: &out) }
        return out
    }

    /// The peek or token open on `entry` now, if any.
    func runningBypass(on entry: EntryID) -> Grant? {
        state.grantsInUse.filter { $0.entry == entry && $0.kind != .spend && $0.isActive(at: state.asOf) }.max { $0.end < $1.end }
    }

    /// Milliseconds a spend on `entry` could run from `state.asOf`, carry included, and whether
    /// the per-entry daily cap (rather than the credit) is what limits it.
    func spendableMilliseconds(for entry: EntryID) -> (milliseconds: Int64, capLimited: Bool) {
        var seconds = availableSeconds(for: entry)
        var capLimited = false
        if let cap = knobs.perEntryDailySpendCap {
            let room = max(0, cap.wholeSeconds - state.spentTodayByEntry[entry, default: 0])
            if room <= seconds { seconds = room; capLimited = true }
        }
        return (seconds * 1000 - state.unchargedMilliseconds, capLimited)
    }

    /// Charges the running spend for the time from its last settlement to `x` (see the type's
    /// comment for the fraction rule).
    mutating func settleSpend(to x: Instant, into out: inout CreditOutcome) {
        guard var sp = state.spend, x > sp.settledThrough else { return }
        let total = state.unchargedMilliseconds + (x - sp.settledThrough).milliseconds
        sp.settledThrough = x
        state.spend = sp
        // The end instant guarantees the credit covers `total / 1000`; `debit` still never takes
        // more than there is, and whatever it could not take stays owed in the carry.
        let taken = debit(total / 1000, for: sp.entry)
        state.unchargedMilliseconds = total - taken * 1000
        guard taken > 0 else { return }
        state.spentToday += taken
        state.spentTodayByEntry[sp.entry, default: 0] += taken
        out.rows.append(LedgerRow(time: x, deltaSeconds: -taken, reason: .spend, entry: sp.entry))
    }

    /// Moves the running spend's end earlier when its credit shrank (expiry at midnight, a paid
    /// peek, an adjustment); never later. At zero the grant ends at once (SPEC §4).
    mutating func refreshSpendEnd(at x: Instant, into out: inout CreditOutcome) {
        guard let sp = state.spend, let i = state.grantsInUse.firstIndex(where: { $0.id == sp.grantID }) else { return }
        let newEnd = x + Span(milliseconds: max(0, spendableMilliseconds(for: sp.entry).milliseconds))
        guard newEnd < state.grantsInUse[i].end else { return }
        if newEnd <= x {
            endGrant(id: sp.grantID, at: x, reason: .fundsRanOut, into: &out)
            return
        }
        state.grantsInUse[i].end = newEnd
        out.events.append(CreditEvent(time: x, entry: sp.entry, kind: .grantShortened(state.grantsInUse[i])))
        restartStreak(at: x)
    }

    /// Takes up to `seconds` from the batches `entry` may use: today's allowances covering it first
    /// (SPEC §4a: spent before earned credit), then its earmark, then the global wallet, each
    /// oldest first. An allowance for other entries is never touched. Returns what it took.
    @discardableResult
    mutating func debit(_ seconds: Int64, for entry: EntryID?) -> Int64 {
        var left = seconds
        func take(where matches: (CreditBatch) -> Bool) {
            for i in state.batches.indices where left > 0 && matches(state.batches[i]) {
                let n = min(left, state.batches[i].remaining)
                state.batches[i].remaining -= n
                left -= n
            }
        }
        take { $0.allowanceCovers(entry) }
        if knobs.perEntryWallets {
            if let entry { take { $0.allowanceKey == nil && $0.earmark == entry } }
            take { $0.allowanceKey == nil && $0.earmark == nil }
        } else {
            take { $0.allowanceKey == nil }
        }
        state.batches.removeAll { $0.remaining == 0 }
        return seconds - left
    }

    /// A one-off charge for a bypass (a paid peek, SPEC §5 step 2) at `state.asOf`.
    /// - Returns: false, changing nothing, when `entry` cannot draw on that much credit.
    mutating func chargeBypass(_ seconds: Int64, entry: EntryID, note: String, into out: inout CreditOutcome) -> Bool {
        guard seconds <= availableSeconds(for: entry) else { return false }
        let now = state.asOf
        debit(seconds, for: entry)
        state.spentToday += seconds
        out.rows.append(LedgerRow(time: now, deltaSeconds: -seconds, reason: .bypassCredit, entry: entry, note: note))
        refreshSpendEnd(at: now, into: &out)
        return true
    }
}
