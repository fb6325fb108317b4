/// What a wallet does when the helper was not running, or the trusted clock was moved back
/// (SPEC §4, §11): the two cases where its `asOf` is not simply "the last instant processed".
extension Wallet {
    /// The trusted clock was moved back to `t`, earlier than `state.asOf` (SPEC §11 clock
    /// recovery). Instants stay absolute, so what the wallet holds on the old, wrong clock is cut
    /// to `t`: every grant in use ends at `t` (one opened on the wrong clock would otherwise stay
    /// open for the whole correction, or open only once the right clock reaches its start), with
    /// nothing charged after the spend's last settlement; abstinence starts again at `t`. Credit and
    /// the day's counters are kept: the seconds counted were really spent or earned.
    public mutating func rewind(to t: Instant) -> CreditOutcome {
        var out = CreditOutcome()
        guard t < state.asOf else { return out }
        // A grant opened after `t` on the old clock is kept as one of no length at `t`, so no
        // duration in the history comes out negative.
        for i in state.grantsInUse.indices where state.grantsInUse[i].start > t { state.grantsInUse[i].start = t }
        for g in state.grantsInUse { endGrant(id: g.id, at: t, reason: .clockCorrected, into: &out) }
        state.asOf = t
        // A freeze dated on the wrong clock (a jump back seen while the trusted clock was ahead)
        // would stop earning until that far-off midnight; one a jump back at `t` would set stays.
        if let f = state.frozenUntil, f > calendar.nextMidnight(after: t) { state.frozenUntil = nil }
        restartStreak(at: t)
        return out
    }

    /// The helper starts again (``resume(at:blockInForce:)``) and a spend was running when it
    /// stopped: the spend is charged up to `lastRun`, the last instant the helper is known to have
    /// run (its last commit), and ends there. Nothing was enforced while the helper was down (in DNS
    /// mode nothing resolved through it at all), so the downtime is not charged; and the entry does
    /// not open again by itself after a restart that may come hours later, which would spend credit
    /// the person is not using. A spend that ran out or reached its `--for` before `lastRun` ends as
    /// it did. Peeks and tokens are paid in advance and keep their end.
    mutating func endSpendStoppedWithTheHelper(lastRun: Instant, into out: inout CreditOutcome) {
        guard state.spend != nil else { return }
        run(to: lastRun, into: &out)
        if let running = state.spend { endGrant(id: running.grantID, at: state.asOf, reason: .helperStopped, into: &out) }
    }
}
