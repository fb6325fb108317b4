/// A profile's credit as a pure state machine (SPEC §4).
///
/// Every operation takes the trusted instant it happens at, first processes whatever fell due
/// before it (awards, expiries, grant ends, in time order), then does its work, and returns the
/// ledger rows and events to persist. A refused operation throws and leaves the wallet exactly as
/// it was, so nothing processed on the way is lost: the next call produces it again.
///
/// Inputs from the rules side are plain values passed in: whether a block is in force
/// (`advance(to:blockInForce:)`), whether a curfew covers an entry and until when (`use`), and
/// until when earning is frozen after a clock jump back (`freezeEarning(until:at:)`).
///
/// Invariants (checked by the property tests): the balance equals the sum of the returned ledger
/// rows, is never negative, and credited earnings per local day never exceed the daily cap.
public struct Wallet: Sendable {
    public internal(set) var state: WalletState
    /// The knobs and zone in force; set a new one after a configuration reload.
    public var policy: CreditPolicy

    public init(state: WalletState, policy: CreditPolicy) {
        self.state = state
        self.policy = policy
    }

    var knobs: Knobs { policy.knobs }
    var calendar: LocalCalendar { policy.calendar }

    // MARK: Reading

    /// Whole seconds of credit, earmarked included.
    public var balanceSeconds: Int64 { state.batches.reduce(0) { $0 + $1.remaining } }

    /// Seconds a spend or paid peek on `entry` can draw on: its earmark plus the global wallet.
    /// With per-entry wallets off, every batch is global.
    public func availableSeconds(for entry: EntryID?) -> Int64 {
        state.batches.reduce(0) { $0 + (usable($1, for: entry) ? $1.remaining : 0) }
    }

    /// Seconds earmarked for `entry`.
    public func earmarkedSeconds(for entry: EntryID) -> Int64 {
        state.batches.reduce(0) { $0 + ($1.earmark == entry ? $1.remaining : 0) }
    }

    /// The instant of the next +5:00, if abstinence continues until then; the helper sets a timer
    /// for it (SPEC §4: "written within 5 s of the 60th minute").
    public var nextAwardAt: Instant? {
        guard state.blockInForce, let s = state.streakStart else { return nil }
        return s + knobs.earnInterval
    }

    /// The next award that will actually add credit: nil when no block is in force or the daily
    /// cap is zero. Refusals for want of credit use it as their `opensAt`.
    ///
    /// When today's cap is already full, awards go on every hour of abstinence but add nothing
    /// until the local midnight (SPEC §4: the cap is per day); the answer is then the first award
    /// on the abstinence timeline (`streakStart + n × interval`) at or after that midnight.
    public var nextCreditAt: Instant? {
        guard let award = nextAwardAt, knobs.dailyEarnCap > .zero, knobs.earnInterval > .zero else { return nil }
        guard let current = state.day, calendar.day(of: award) <= current,
              state.earnedToday >= knobs.dailyEarnCap.wholeSeconds else { return award }
        let midnight = calendar.startOfDay(calendar.adding(days: 1, to: current))
        guard award < midnight else { return award }
        let step = knobs.earnInterval.milliseconds
        let behind = (midnight - award).milliseconds
        let steps = (behind + step - 1) / step // whole intervals, rounded up, to reach the midnight
        return award + knobs.earnInterval * steps
    }

    /// The grants that have not ended, as of `state.asOf`.
    public var grantsInUse: [Grant] { state.grantsInUse }

    /// The running spend's grant, whose `end` is the exact instant credit runs out (or `--for`).
    public var runningSpend: Grant? {
        guard let s = state.spend else { return nil }
        return state.grantsInUse.first { $0.id == s.grantID }
    }

    /// The earliest instant at which `advance` has something to do: an award, an expiry, a grant
    /// end, or (while a spend runs) local midnight. The helper's timer fires here.
    public var nextDueInstant: Instant? {
        var due: Instant? = nextAwardAt
        func consider(_ t: Instant?) { if let t, due.map({ t < $0 }) ?? true { due = t } }
        for g in state.grantsInUse { consider(g.end) }
        for b in state.batches { consider(b.expiresAt) }
        // A new day's allowance is granted at its midnight even when nothing else is due (SPEC §4a).
        if state.spend != nil || !policy.allowances.isEmpty || !state.allowanceGranted.isEmpty {
            consider(calendar.nextMidnight(after: state.asOf))
        }
        return due
    }

    /// Earned (after the cap) and spent seconds of the local day containing `t` — the `wallet`
    /// command's `earned_today_seconds` and `spent_today_seconds`. Zero for a day not yet reached.
    public func today(at t: Instant) -> (earnedSeconds: Int64, spentSeconds: Int64) {
        guard state.day == calendar.day(of: t) else { return (0, 0) }
        return (state.earnedToday, state.spentToday)
    }

    func usable(_ b: CreditBatch, for entry: EntryID?) -> Bool {
        if b.allowanceKey != nil { return b.allowanceCovers(entry) }
        return !knobs.perEntryWallets || b.earmark == nil || b.earmark == entry
    }

    /// Seconds of today's allowances a spend on `entry` may still use (SPEC §4a
    /// `allowance_left_seconds`); nil when no allowance covers `entry` today.
    public func allowanceLeftSeconds(for entry: EntryID?, at t: Instant) -> Int64? {
        let today = calendar.day(of: t)
        guard state.allowanceDay == today else {
            // Not granted yet for this day (the wallet is behind `t`): what the day will grant.
            let weekday = calendar.weekday(of: today)
            let due = policy.allowances.filter { $0.covers(entry) }.map { $0.seconds(onWeekday: weekday) }
            return due.contains { $0 > 0 } ? due.reduce(0, +) : nil
        }
        let covering = state.allowanceGranted.filter { $0.value > 0 && Allowance.covers(key: $0.key, entry) }
        guard !covering.isEmpty else { return nil }
        return state.batches.reduce(0) { $0 + ($1.allowanceCovers(entry) && $1.origin == .allowance(today) ? $1.remaining : 0) }
    }

    // MARK: Time

    /// Processes everything due up to `t`, then records whether a block is in force from `t` on.
    ///
    /// Call it at every change of "a block is in force for this profile" (window edges, block and
    /// unblock) and whenever `nextDueInstant` arrives. Between calls the last reported value is
    /// assumed to hold: SPEC §4 abstinence needs the block in force the whole hour.
    public mutating func advance(to t: Instant, blockInForce: Bool) -> CreditOutcome {
        var out = CreditOutcome()
        run(to: t, into: &out)
        if blockInForce != state.blockInForce {
            state.blockInForce = blockInForce
            restartStreak(at: state.asOf)
        }
        return out
    }

    /// The helper starts again after not running since `state.asOf`. Nothing was enforced in the
    /// gap, so it earns nothing: expiries and grant ends in the gap are processed, and the hour of
    /// abstinence starts at `t` if a block is in force then. Nor is anything charged for the gap: a
    /// spend that was running ends at `lastRun` (the last instant the helper is known to have run;
    /// its last commit when nil), charged up to there (``endSpendStoppedWithTheHelper(lastRun:into:)``).
    public mutating func resume(at t: Instant, blockInForce: Bool, lastRun: Instant? = nil) -> CreditOutcome {
        var out = CreditOutcome()
        endSpendStoppedWithTheHelper(lastRun: min(max(lastRun ?? state.asOf, state.asOf), t), into: &out)
        state.blockInForce = false
        state.streakStart = nil
        let rest = advance(to: t, blockInForce: blockInForce)
        out.rows += rest.rows
        out.events += rest.events
        return out
    }

    /// Processes every due instant up to `target` in time order.
    mutating func run(to target: Instant, into out: inout CreditOutcome) {
        let t = max(target, state.asOf)
        while let due = nextDueInstant, due <= t {
            step(at: max(due, state.asOf), into: &out)
        }
        settleSpend(to: t, into: &out)
        state.asOf = t
        rollDay(to: t)
        // An allowance set or changed since the last call takes effect now (SPEC §4a).
        if grantAllowances(at: t, into: &out) { refreshSpendEnd(at: t, into: &out) }
    }

    /// One due instant. Order at equal instants: charge the running spend up to here, close grants
    /// that end here, start the new day, expire, award, then shorten the spend if credit went away.
    private mutating func step(at x: Instant, into out: inout CreditOutcome) {
        settleSpend(to: x, into: &out)
        for g in state.grantsInUse where g.end <= x {
            let reason: CreditEvent.GrantEndReason
            if g.id == state.spend?.grantID {
                reason = g.end == state.spend?.limitEnd ? .limitReached : .fundsRanOut
            } else {
                reason = .elapsed
            }
            endGrant(id: g.id, at: g.end, reason: reason, into: &out)
        }
        state.asOf = x
        rollDay(to: x)
        expireBatches(at: x, into: &out)
        _ = grantAllowances(at: x, into: &out)
        // At `x`, not at the award instant: they differ only when a reload shortened the earn
        // interval, and rows must never be dated before what was already processed.
        if let award = nextAwardAt, award <= x { awardEarnings(at: x, into: &out) }
        refreshSpendEnd(at: x, into: &out)
    }

    /// Resets the per-day counters when `x` is on a later local day. Never on an earlier one
    /// (a zone moved west by a reload): that would hand out a second daily cap.
    mutating func rollDay(to x: Instant) {
        let d = calendar.day(of: x)
        if let current = state.day, d <= current { return }
        state.day = d
        state.earnedToday = 0
        state.spentToday = 0
        state.spentTodayByEntry = [:]
    }

    private mutating func expireBatches(at x: Instant, into out: inout CreditOutcome) {
        var kept: [CreditBatch] = []
        for b in state.batches {
            guard let e = b.expiresAt, e <= x else { kept.append(b); continue }
            if case .allowance(let d) = b.origin {
                // SPEC §4a: never rolled over; the reset is its own row, so the ledger tells the day.
                out.rows.append(LedgerRow(time: e, deltaSeconds: -b.remaining, reason: .allowance, entry: nil,
                                          note: "allowance of \(d) for \(Self.allowanceWords(b.allowanceKey)) reset at midnight"))
                out.events.append(CreditEvent(time: e, kind: .allowanceReset(seconds: b.remaining, entries: Allowance.entries(ofKey: b.allowanceKey ?? "*"))))
                continue
            }
            var day: LocalCalendar.Day?
            if case .earned(let d) = b.origin { day = d }
            out.rows.append(LedgerRow(time: e, deltaSeconds: -b.remaining, reason: .expire, entry: b.earmark,
                                      note: day.map { "earned on \($0)" }))
            out.events.append(CreditEvent(time: e, entry: b.earmark, kind: .expired(seconds: b.remaining, earnedOn: day)))
        }
        state.batches = kept
    }

    // MARK: Grants

    /// Records a grant of any kind as in use: it ends abstinence until it closes (SPEC §4: "Using a
    /// grant resets the counter to 0"). Used by `use` and by the bypass ladder.
    mutating func openGrant(kind: Grant.Kind, entry: EntryID, start: Instant, end: Instant, task: String?,
                            into out: inout CreditOutcome) -> Grant {
        let g = Grant(id: state.nextGrantID, entry: entry, kind: kind, start: start, end: end, task: task)
        state.nextGrantID += 1
        state.grantsInUse.append(g)
        restartStreak(at: start)
        out.events.append(CreditEvent(time: start, entry: entry, kind: .grantOpened(g)))
        out.grant = g
        return g
    }

    /// Closes a grant at `x` (its end or earlier). A spend is charged up to `x` first.
    mutating func endGrant(id: Int64, at x: Instant, reason: CreditEvent.GrantEndReason, into out: inout CreditOutcome) {
        guard let i = state.grantsInUse.firstIndex(where: { $0.id == id }) else { return }
        if state.spend?.grantID == id {
            settleSpend(to: x, into: &out)
            state.spend = nil
        }
        var g = state.grantsInUse.remove(at: i)
        let early = x < g.end
        g.end = x
        out.events.append(CreditEvent(time: x, entry: g.entry, kind: .grantEnded(g, reason: reason)))
        // Closing early frees the profile sooner, so abstinence may start now rather than at the old end.
        if early { restartStreak(at: x) }
    }

    /// `scrolloff stop [ENTRY]`: ends the running spend on `entry` (or any spend when nil) at `t`,
    /// charged up to `t` and nothing after. Peeks and tokens are not what `use` opened: they run
    /// to their end.
    /// - Throws: `.grantRunning` when only a peek or token matches (with its end), `.notBlocked`
    ///   when nothing matching is open.
    public mutating func stop(_ entry: EntryID?, at t: Instant) throws(Refusal) -> CreditOutcome {
        var next = self
        var out = CreditOutcome()
        next.run(to: t, into: &out)
        let now = next.state.asOf
        // `stop` closes what `use` opened (SPEC §4): spends. A peek or token is a fixed bypass
        // that closes by itself; ending it early would only hand back nothing.
        let targets = next.state.grantsInUse.filter { $0.kind == .spend && (entry == nil || $0.entry == entry) }
        guard !targets.isEmpty else {
            let bypass = next.state.grantsInUse.filter { $0.kind != .spend && (entry == nil || $0.entry == entry) }.min { $0.end < $1.end }
            if let bypass {
                throw Refusal(rule: .grantRunning, subject: bypass.entry.rawValue, opensAt: bypass.end,
                              message: "No spend is running\(entry.map { " on \($0)" } ?? ""), so nothing was stopped and nothing is charged. "
                                  + "The \(bypass.kind.rawValue) on \(bypass.entry) closes by itself; `stop` ends what `use` opened.")
            }
            throw Refusal(rule: .notBlocked, subject: entry?.rawValue,
                          message: "No spend is running\(entry.map { " on \($0)" } ?? "") right now, so there is nothing to stop.")
        }
        for g in targets { next.endGrant(id: g.id, at: now, reason: .stopped, into: &out) }
        self = next
        return out
    }
}
