/// Earning (SPEC §4): +5:00 per 60 consecutive minutes of abstinence, a daily cap, rollover
/// batches, starter credit, and the freeze after a clock jump back (SPEC §11).
extension Wallet {
    /// Starts the abstinence hour again from `x`, or later if a grant is still in use or earning
    /// is frozen; no run at all while no block is in force.
    ///
    /// Abstinence is measured on trusted instants, which advance with the monotonic clock while
    /// the helper runs (SPEC §11), so changing the wall clock neither speeds nor repeats it.
    /// Blocked queries never reach the wallet, so they cannot reset it (SPEC §4).
    mutating func restartStreak(at x: Instant) {
        guard state.blockInForce else { state.streakStart = nil; return }
        var start = x
        for g in state.grantsInUse where g.end > start { start = g.end }
        if let f = state.frozenUntil, f > start { start = f }
        state.streakStart = start
    }

    /// One award at its exact instant `a`. The full unit is written as `earn`; whatever the daily
    /// cap does not allow is taken back at the same instant as `capDiscard`, so the ledger shows
    /// both the hour achieved and the cap at work, and still sums to the balance.
    mutating func awardEarnings(at a: Instant, into out: inout CreditOutcome) {
        rollDay(to: a)
        let unit = knobs.earnAmount.wholeSeconds
        let cap = knobs.dailyEarnCap.wholeSeconds
        let credited = max(0, min(unit, cap - state.earnedToday))
        out.rows.append(LedgerRow(time: a, deltaSeconds: unit, reason: .earn,
                                  note: "\(SpanWords.describe(knobs.earnInterval)) without scrolling"))
        if credited > 0 { out.events.append(CreditEvent(time: a, kind: .earned(seconds: credited))) }
        if credited < unit {
            let discarded = unit - credited
            out.rows.append(LedgerRow(time: a, deltaSeconds: -discarded, reason: .capDiscard,
                                      note: "over the daily cap of \(SpanWords.describe(seconds: cap))"))
            out.events.append(CreditEvent(time: a, kind: .dailyCapReached(discardedSeconds: discarded, capSeconds: cap)))
        }
        if credited > 0, let day = state.day {
            // Rollover (SPEC §4): earned on `day`, gone at the local midnight `rolloverDays` later.
            let expiry = calendar.startOfDay(calendar.adding(days: knobs.rolloverDays + 1, to: day))
            insert(CreditBatch(origin: .earned(day), createdAt: a, expiresAt: expiry, remaining: credited))
        }
        state.earnedToday += credited
        state.streakStart = a
    }

    mutating func insert(_ batch: CreditBatch) {
        let i = state.batches.firstIndex { CreditBatch.spendsBefore(batch, $0) } ?? state.batches.endIndex
        state.batches.insert(batch, at: i)
    }

    /// SPEC §4: +2:00 once, on first setup, outside caps and rollover. Later calls do nothing.
    public mutating func grantStarter(at t: Instant) -> CreditOutcome {
        var out = CreditOutcome()
        run(to: t, into: &out)
        guard !state.starterGranted else { return out }
        state.starterGranted = true
        let s = knobs.starterCredit.wholeSeconds
        guard s > 0 else { return out }
        let now = state.asOf
        insert(CreditBatch(origin: .starter, createdAt: now, expiresAt: nil, remaining: s))
        out.rows.append(LedgerRow(time: now, deltaSeconds: s, reason: .starter, note: "starter credit"))
        out.events.append(CreditEvent(time: now, kind: .starterCredit(seconds: s)))
        refreshSpendEnd(at: now, into: &out)
        return out
    }

    /// SPEC §11: after a jump back of the system clock, nothing is earned before `until` (the
    /// trusted clock passes the next local midnight). The hour in progress is dropped and a new one
    /// starts at `until`. An `until` not after `t` changes nothing.
    public mutating func freezeEarning(until: Instant, at t: Instant) -> CreditOutcome {
        var out = CreditOutcome()
        run(to: t, into: &out)
        guard until > state.asOf else { return out }
        state.frozenUntil = max(until, state.frozenUntil ?? until)
        restartStreak(at: state.asOf)
        out.events.append(CreditEvent(time: state.asOf, kind: .earningFrozen(until: until)))
        return out
    }

    /// Whether earning is frozen at `t` and until when (for `wallet` and `doctor`).
    public func earningFrozen(at t: Instant) -> Instant? {
        guard let f = state.frozenUntil, f > t else { return nil }
        return f
    }
}
