import ControlAPI
import ScrollOffCore
import Store

extension HelperEngine {
    /// `scrolloff status` (SPEC §13): every entry the profile names with its state, lock and next
    /// change; peeks and tokens left; running grants with their tasks. Read-only: the wallet is
    /// brought to the second on a copy, so reading never writes.
    public func status(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> StatusReport {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        let credit = p.account.status(at: now)
        return StatusReport(
            profile: p.name, now: now,
            // An entry whose rules are all gone (a focus session over) has nothing to report.
            entries: p.namedEntries(at: now).map { Self.entryReport(p, $0, at: now) }.filter { $0.state != EntryState.none.name },
            peeksLeftToday: credit.peeksLeftToday, tokensLeftMonth: credit.tokensLeftThisMonth,
            balanceSeconds: credit.balanceSeconds, grants: credit.grantsInUse.map(GrantReport.init),
            strictCurfewUntil: p.rules.strictCurfew(at: now)?.occurrence.end,
            focus: p.focusSessions.filter { $0.isActive(at: now) }.sorted { $0.end < $1.end }.map {
                FocusReport(id: $0.id, entries: $0.entries.map(\.rawValue).sorted(), start: $0.start, end: $0.end, reason: $0.reason)
            },
            requests: recentTimeRequests(profile: p.name, now: now))
    }

    /// `scrolloff wallet` (SPEC §4, §13), to the second (on a copy; see `status`).
    public func wallet(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> WalletReport {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        let credit = p.account.status(at: now)
        let batches = p.account.wallet.state.batches.map { b -> BatchReport in
            let (origin, day): (String, String?) = switch b.origin {
            case .earned(let d): ("earned", d.description)
            case .starter: ("starter", nil)
            case .adjustment: ("adjustment", nil)
            }
            return BatchReport(origin: origin, earnedOn: day, remainingSeconds: b.remaining, expiresAt: b.expiresAt, earmark: b.earmark?.rawValue)
        }
        return WalletReport(
            profile: p.name, balanceSeconds: credit.balanceSeconds, earnedTodaySeconds: credit.earnedTodaySeconds,
            spentTodaySeconds: credit.spentTodaySeconds, batches: batches, nextAwardAt: credit.nextAwardAt,
            earningFrozenUntil: credit.earningFrozenUntil, grants: credit.grantsInUse.map(GrantReport.init), now: now)
    }

    /// `scrolloff events [--since DATE]`: the profile's events and machine-wide ones (tamper), oldest first.
    /// Urges still waiting for their batch are written first, so the list is complete.
    public func events(since: Instant? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> [EventReport] {
        _ = try profileIndex(profile, in: profiles)
        try flushUrges()
        let rows: [StoredEvent]
        do { rows = try store.events(since: since, profile: profile) } catch { throw EngineError(error) }
        return rows.map(Self.eventReport)
    }

    /// `scrolloff stats [--day|--week|--month]` (SPEC §7) from the store's daily totals.
    ///
    /// Approximate, and said so in `notes`: protected time counts only while the helper ran; urges
    /// are resisted when no grant for the entry started within 5 minutes (an urge in the last
    /// 5 minutes counts as resisted until a grant follows); the streak counts back from today over
    /// days that kept it (no token, spend ≤ earned), today included only when it keeps it so far.
    public func stats(_ period: StatsPeriod, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> StatsReport {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        try flushUrges()
        // Write the protected time up to now, so today's number is current.
        var change = StateChange()
        var work = profiles
        try commit(&change, profiles: &work, now: now)
        let days: [DailyTotals]
        do { days = try store.dailyTotals(profile: profile) } catch { throw EngineError(error) }
        let today = p.calendar.day(of: now)
        let first = p.calendar.adding(days: -(period.days - 1), to: today)
        var total = DailyTotals(day: first)
        var byDay: [LocalCalendar.Day: DailyTotals] = [:]
        for d in days {
            byDay[d.day] = d
            guard d.day >= first, d.day <= today else { continue }
            total.urges += d.urges
            total.resisted += d.resisted
            total.protectedSeconds += d.protectedSeconds
            total.openSeconds += d.openSeconds
            total.spentSeconds += d.spentSeconds
            total.earnedSeconds += d.earnedSeconds
            total.peeks += d.peeks
            total.tokens += d.tokens
        }
        return StatsReport(
            profile: profile, period: period, firstDay: first.description, lastDay: today.description,
            urges: total.urges, urgesResisted: total.resisted, protectedSeconds: total.protectedSeconds,
            spentSeconds: total.spentSeconds, openSeconds: total.openSeconds, earnedSeconds: total.earnedSeconds,
            peeks: total.peeks, tokens: total.tokens,
            streakDays: Self.streak(byDay: byDay, today: today, since: days.first?.day, calendar: p.calendar),
            notes: [
                "Protected time counts only the time the helper was running.",
                "An urge counts as resisted when no grant for that entry started within 5 minutes of it; the last 5 minutes may still change.",
                "The streak counts days with no token used and no more credit spent than earned.",
            ])
    }

    /// SPEC §7 streak: consecutive local days ending today with no token and spend ≤ earned. Days
    /// with nothing recorded keep it; days before the first record do not count.
    static func streak(byDay: [LocalCalendar.Day: DailyTotals], today: LocalCalendar.Day, since first: LocalCalendar.Day?,
                       calendar: LocalCalendar) -> Int {
        guard let first else { return 0 }
        var count = 0
        var day = today
        // Today still running: it counts when it keeps the streak so far, and does not break it otherwise.
        if byDay[day].map(\.keepsStreak) ?? true { count += 1 }
        day = calendar.adding(days: -1, to: day)
        while day >= first {
            guard byDay[day].map(\.keepsStreak) ?? true else { break }
            count += 1
            day = calendar.adding(days: -1, to: day)
        }
        return count
    }
}
