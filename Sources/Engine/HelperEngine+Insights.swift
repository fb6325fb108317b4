import ControlAPI
import Foundation
import Logging
import ScrollOffCore
import Store

extension HelperEngine {
    /// What is approximate about the numbers, said with every report.
    static let statsNotes = [
        "Protected time counts only the time the helper was running.",
        "An urge counts as resisted when no grant for that entry started within 5 minutes of it; the last 5 minutes may still change.",
        "The streak counts days with no token used and no more credit spent than earned.",
    ]

    /// `scrolloff stats [--day|--week|--month|--year]` (SPEC §7): the core's `Insights` over
    /// the store's days (raw rows for 90 days, rollups before), as of the trusted now.
    public func stats(_ period: StatsPeriod, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> StatsReport {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        try flushUrges()
        // Write the protected time up to now, so today's number is current.
        var change = StateChange()
        var work = profiles
        try commit(&change, profiles: &work, now: now)
        let days = try insightDays(profile)
        return Self.report(period, profile: profile, days: days, today: p.calendar.day(of: now), calendar: p.calendar)
    }

    /// `scrolloff digest`: the latest weekly digest written for `profile`, and when the next is due.
    public func digest(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> DigestReport {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        let event: StoredEvent?
        do { event = try store.latestEvent(kind: .weeklyDigest, profile: profile) } catch { throw EngineError(error) }
        let report = event?.payload.flatMap { try? ControlJSON.decoder().decode(StatsReport.self, from: Data($0.utf8)) }
        return DigestReport(profile: profile, digest: report, writtenAt: report == nil ? nil : event?.time,
                            nextAt: WeeklyDigest.next(after: now, calendar: p.calendar), now: now)
    }

    static func report(_ period: StatsPeriod, profile: String, days: [InsightDay], today: LocalCalendar.Day,
                       calendar: LocalCalendar) -> StatsReport {
        let insights = Insights(days: days, today: today, periodDays: period.days, calendar: calendar)
        return StatsReport(profile: profile, period: period, insights: insights, calendar: calendar, notes: statsNotes)
    }

    func insightDays(_ profile: String) throws(EngineError) -> [InsightDay] {
        do { return try store.dailyTotals(profile: profile).map(\.insight) } catch { throw EngineError(error) }
    }

    /// Records milestones reached and the week's digest when due (SPEC §7), each once
    /// (`InsightChecks.look`), and logs failing looks with back-off.
    /// - Returns: the digests written now, for the delivery hook.
    @discardableResult
    func recordInsightMarks(now: Instant) -> [(profile: String, report: StatsReport)] {
        let (written, failures) = insightChecks.look(profiles: profiles, store: store, now: now, logger: logger)
        insightChecks.note(failures: failures, at: now, logger: logger)
        return written
    }

    /// Hands each digest written now to the hook, off the engine's actor.
    func deliverDigests(_ written: [(profile: String, report: StatsReport)]) {
        let settings = digestHook
        guard !settings.command.isEmpty else { return }
        let logger = self.logger
        let running = runningHooks
        for w in written { Task.detached { await DigestHook.deliver(w.report, settings: settings, logger: logger, running: running) } }
    }

    /// `[digest]` from the configuration, at start and on reload.
    public func setDigestHook(_ settings: DigestHookSettings) { digestHook = settings }
}
