/// The bypass ladder of SPEC §5, per profile and per local day of the profile's zone:
/// free peeks first, then paid peeks, then only emergency tokens (at most 5 a calendar month).
///
/// The ladder keeps counters; credit and grants live in the `Wallet`, which every operation takes
/// `inout`: a paid peek is charged there, and every grant is recorded there so that it ends the
/// current hour of abstinence (SPEC §4: "Using a grant resets the counter to 0"). A refused
/// operation throws and changes neither the ladder nor the wallet.
///
/// Ledger: a free peek writes a zero-delta `bypassFree` row, a paid peek a `bypassCredit` row of
/// minus its cost, a token a zero-delta `bypassToken` row. Tokens cost no credit, but a row keeps
/// every bypass in the one table that `export --csv` and the insights read, next to the credit
/// rows of the same day.
public struct BypassLadder: Sendable {
    public internal(set) var state: LadderState

    public init(state: LadderState = LadderState()) { self.state = state }

    // MARK: Reading

    /// Peeks still available today, free and paid together (`status --json` `peeks_left_today`).
    public func peeksLeftToday(at t: Instant, policy: CreditPolicy) -> Int {
        let k = policy.knobs
        let fresh = isNewDay(t, policy.calendar)
        let free = fresh ? k.freePeeksPerDay : max(0, k.freePeeksPerDay - state.freePeeksUsed)
        let paid = fresh ? k.paidPeeksPerDay : max(0, k.paidPeeksPerDay - state.paidPeeksUsed)
        return free + paid
    }

    /// Tokens still available this calendar month (`tokens_left_month`).
    public func tokensLeftThisMonth(at t: Instant, policy: CreditPolicy) -> Int {
        let allowance = min(policy.knobs.includedTokensPerMonth, Knobs.tokenMonthlyCeiling)
        let used = isNewMonth(t, policy.calendar) ? 0 : state.tokensUsed
        return max(0, allowance - used)
    }

    /// What `peek` would do at `t`.
    public func nextStep(at t: Instant, policy: CreditPolicy) -> BypassStep {
        let k = policy.knobs
        let fresh = isNewDay(t, policy.calendar)
        if fresh ? k.freePeeksPerDay > 0 : state.freePeeksUsed < k.freePeeksPerDay { return .freePeek }
        if fresh ? k.paidPeeksPerDay > 0 : state.paidPeeksUsed < k.paidPeeksPerDay {
            return .paidPeek(costSeconds: k.paidPeekCost.wholeSeconds)
        }
        return .tokenOnly
    }

    /// Whether `t` falls on a later local day than the counters, which then read as zero.
    func isNewDay(_ t: Instant, _ calendar: LocalCalendar) -> Bool {
        state.day.map { calendar.day(of: t) > $0 } ?? true
    }

    func isNewMonth(_ t: Instant, _ calendar: LocalCalendar) -> Bool {
        state.month.map { calendar.month(of: t) > $0 } ?? true
    }

    /// The end of `entry`'s lockout, if it is locked at `t`.
    public func lockedUntil(_ entry: EntryID, at t: Instant) -> Instant? {
        guard let until = state.lockedUntil[entry], until > t else { return nil }
        return until
    }

    // MARK: Operations

    /// `scrolloff peek ENTRY [--task TEXT]`: opens `entry` for the peek length (60 s), free while
    /// today's free peeks last, then for `paidPeekCost` of credit each.
    /// - Parameter curfewEndsAt: from the rules side: when a curfew covering `entry` now ends.
    /// - Throws: `.curfew`, `.bypassLockout`, `.insufficientCredit` (a paid peek without the
    ///   credit) or `.peeksUsedUp`, each with the instant it opens again.
    public mutating func peek(_ entry: EntryID, task: String? = nil, at t: Instant, curfewEndsAt: Instant? = nil,
                              wallet: inout Wallet) throws(Refusal) -> CreditOutcome {
        var w = wallet
        var l = self
        var out = CreditOutcome()
        let now = try l.prepare(entry, at: t, curfewEndsAt: curfewEndsAt, wallet: &w, into: &out)
        let k = w.policy.knobs
        let paid: Bool
        if l.state.freePeeksUsed < k.freePeeksPerDay {
            l.state.freePeeksUsed += 1
            paid = false
            out.rows.append(LedgerRow(time: now, deltaSeconds: 0, reason: .bypassFree, entry: entry,
                                      note: "free peek \(l.state.freePeeksUsed) of \(k.freePeeksPerDay) today"))
        } else if l.state.paidPeeksUsed < k.paidPeeksPerDay {
            let cost = k.paidPeekCost.wholeSeconds
            let note = "peek \(l.state.paidPeeksUsed + 1) of \(k.paidPeeksPerDay) paid today"
            guard w.chargeBypass(cost, entry: entry, note: note, into: &out) else {
                throw Refusal(rule: .insufficientCredit, subject: entry.rawValue, opensAt: w.nextCreditAt,
                              message: "A peek now costs \(SpanWords.describe(seconds: cost, rounding: .up)) and \(SpanWords.describe(seconds: w.availableSeconds(for: entry))) is available for \(entry). Every \(SpanWords.describe(k.earnInterval)) away earns \(SpanWords.describe(k.earnAmount)).")
            }
            l.state.paidPeeksUsed += 1
            paid = true
        } else {
            let tokens = l.tokensLeftThisMonth(at: now, policy: w.policy)
            let hint = tokens > 0 ? " An emergency token (\(tokens) left this month) still opens it for \(SpanWords.describe(k.tokenLength))." : ""
            throw Refusal(rule: .peeksUsedUp, subject: entry.rawValue, opensAt: w.calendar.nextMidnight(after: now),
                          message: "All \(k.freePeeksPerDay + k.paidPeeksPerDay) peeks of today are used; they come back at midnight.\(hint)")
        }
        l.open(.peek, entry: entry, length: k.peekLength, task: task, wallet: &w, into: &out)
        out.events.append(CreditEvent(time: now, entry: entry,
                                      kind: .peekUsed(paid: paid, peeksLeftToday: l.peeksLeftToday(at: now, policy: w.policy))))
        wallet = w
        self = l
        return out
    }

    /// `scrolloff token ENTRY [--task TEXT]`: opens `entry` for the token length (10 min). Tokens
    /// are available whenever the month's allowance lasts, not only after the peeks: an emergency
    /// may need more than a minute.
    /// - Throws: `.curfew`, `.bypassLockout` or `.tokensUsedUp` (opens on the 1st, local midnight;
    ///   no `opensAt` when the preset includes no tokens at all, SPEC §6).
    public mutating func token(_ entry: EntryID, task: String? = nil, at t: Instant, curfewEndsAt: Instant? = nil,
                               wallet: inout Wallet) throws(Refusal) -> CreditOutcome {
        var w = wallet
        var l = self
        var out = CreditOutcome()
        let now = try l.prepare(entry, at: t, curfewEndsAt: curfewEndsAt, wallet: &w, into: &out)
        let k = w.policy.knobs
        let allowance = min(k.includedTokensPerMonth, Knobs.tokenMonthlyCeiling)
        guard allowance > 0 else {
            // No month brings tokens on this preset, so there is no instant to wait for (opensAt nil).
            throw Refusal(rule: .tokensUsedUp, subject: entry.rawValue, opensAt: nil,
                          message: "No emergency tokens come with this profile, so none arrive on the 1st. Ask an owner for time instead; "
                              + "whoever administers Scroll Off here can set \(Knob.includedTokensPerMonth.rawValue) (up to \(Knobs.tokenMonthlyCeiling)) or choose the flexible preset, which includes \(Preset.flexible.knobs.includedTokensPerMonth) a month.")
        }
        guard l.state.tokensUsed < allowance else {
            let month = w.calendar.month(of: now)
            let first = month.month == 12
                ? LocalCalendar.Day(year: month.year + 1, month: 1, day: 1)
                : LocalCalendar.Day(year: month.year, month: month.month + 1, day: 1)
            throw Refusal(rule: .tokensUsedUp, subject: entry.rawValue, opensAt: w.calendar.startOfDay(first),
                          message: "\(l.state.tokensUsed) of \(allowance) emergency tokens used this month; new ones arrive on the 1st.")
        }
        l.state.tokensUsed += 1
        out.rows.append(LedgerRow(time: now, deltaSeconds: 0, reason: .bypassToken, entry: entry,
                                  note: "token \(l.state.tokensUsed) of \(allowance) this month"))
        l.open(.token, entry: entry, length: k.tokenLength, task: task, wallet: &w, into: &out)
        out.events.append(CreditEvent(time: now, entry: entry, kind: .tokenUsed(tokensLeftThisMonth: allowance - l.state.tokensUsed)))
        wallet = w
        self = l
        return out
    }

    /// Brings the wallet and the counters to `t` and applies the checks every bypass shares, in
    /// the order people should hear them: a curfew first (nothing opens, SPEC §2), then the lockout.
    private mutating func prepare(_ entry: EntryID, at t: Instant, curfewEndsAt: Instant?, wallet w: inout Wallet,
                                  into out: inout CreditOutcome) throws(Refusal) -> Instant {
        w.run(to: t, into: &out)
        let now = w.state.asOf
        if let c = curfewEndsAt, c > now {
            throw Refusal(rule: .curfew, subject: entry.rawValue, opensAt: c,
                          message: "\(entry) is inside a curfew; no peek or token opens it until the curfew ends.")
        }
        // A spend already opens the entry; a peek or token on top would pay (or count) for the
        // same minutes twice. Grants never stack.
        if let spend = w.state.grantsInUse.first(where: { $0.kind == .spend && $0.entry == entry && $0.isActive(at: now) }) {
            throw Refusal(rule: .grantRunning, subject: entry.rawValue, opensAt: spend.end,
                          message: "\(entry) is already open by your spend, so a peek or token now would count the same minutes twice. "
                              + "Nothing was used; `scrolloff stop` ends the spend first.")
        }
        roll(to: now, calendar: w.calendar)
        if let until = lockedUntil(entry, at: now) {
            throw Refusal(rule: .bypassLockout, subject: entry.rawValue, opensAt: until,
                          message: "\(entry) was just open; after a peek or token it rests for twice that long before the next one.")
        }
        return now
    }

    /// Opens the grant in the wallet and locks the entry for twice the bypass length after it
    /// ends (SPEC §5): a 60 s peek opened at 12:00 can be followed by another at 12:03.
    private mutating func open(_ kind: Grant.Kind, entry: EntryID, length: Span, task: String?,
                               wallet w: inout Wallet, into out: inout CreditOutcome) {
        let now = w.state.asOf
        let g = w.openGrant(kind: kind, entry: entry, start: now, end: now + length, task: task, into: &out)
        state.lockedUntil[entry] = g.end + length * 2
    }

    /// Starts the day's and month's counters afresh at local midnight and the 1st; drops
    /// lockouts that have passed.
    mutating func roll(to now: Instant, calendar: LocalCalendar) {
        // Later days and months only: a zone moved west by a reload must not hand out a second allowance.
        if isNewDay(now, calendar) {
            state.day = calendar.day(of: now)
            state.freePeeksUsed = 0
            state.paidPeeksUsed = 0
        }
        if isNewMonth(now, calendar) {
            state.month = calendar.month(of: now)
            state.tokensUsed = 0
        }
        state.lockedUntil = state.lockedUntil.filter { $0.value > now }
    }
}
