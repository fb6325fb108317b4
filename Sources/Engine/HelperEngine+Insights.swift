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

    /// How often the timer looks for milestones reached; the digest moment is always looked at on time.
    static let insightCheckInterval = Span.minutes(10)

    /// Records milestones reached and the week's digest when due (SPEC §7), each once: the store's
    /// marks make a second run, a restart or a recomputation write nothing. A digest missed while the
    /// helper was down is written at the next start (only the latest week's; older ones are gone by).
    /// - Returns: the digests written now, for the delivery hook.
    @discardableResult
    func recordInsightMarks(now: Instant) -> [(profile: String, report: StatsReport)] {
        var next = now + Self.insightCheckInterval
        var written: [(String, StatsReport)] = []
        var failures: [String] = []
        for p in profiles {
            next = min(next, WeeklyDigest.next(after: now, calendar: p.calendar))
            do {
                let days = try store.dailyTotals(profile: p.name).map(\.insight)
                guard let first = days.first?.day else { continue }
                let today = p.calendar.day(of: now)
                let lifetime = Insights(days: days, today: today, periodDays: nil, calendar: p.calendar)
                for m in lifetime.milestones {
                    let event = StoredEvent(profile: p.name, time: now, kind: .milestone, message: m.message,
                                            payload: String(decoding: ControlJSON.encode(MilestoneReport(m)), as: UTF8.self))
                    if try store.recordOnce(key: m.key, event: event) {
                        logger.info("milestone reached", metadata: ["profile": "\(p.name)", "insights.milestone": "\(m.key)"])
                    }
                }
                let due = WeeklyDigest.latest(atOrBefore: now, calendar: p.calendar)
                // A week with nothing recorded before its Sunday has nothing to say (a helper first started on a
                // Sunday evening writes no digest of that one day).
                guard first < due.weekEnding else { continue }
                let key = WeeklyDigest.key(weekEnding: due.weekEnding)
                guard try !store.isMarked(key: key, profile: p.name) else { continue }
                let report = Self.report(.week, profile: p.name, days: days, today: due.weekEnding, calendar: p.calendar)
                let event = StoredEvent(profile: p.name, time: now, kind: .weeklyDigest,
                                        message: "Your week \(report.firstDay) to \(report.lastDay): " + report.summary.joined(separator: " "),
                                        payload: String(decoding: ControlJSON.encode(report), as: UTF8.self))
                if try store.recordOnce(key: key, event: event) {
                    logger.info("weekly digest written", metadata: ["profile": "\(p.name)", "insights.week": "\(due.weekEnding)"])
                    written.append((p.name, report))
                }
            } catch {
                // Only books: try again at the next check.
                failures.append("\(p.name): \(error)")
            }
        }
        nextInsightCheckAt = next
        noteInsightCheck(failures: failures, at: now)
        return written
    }

    /// Logs failing checks as failing state writes are logged (`CommitHealth`): the first at once,
    /// then summaries ever further apart, and the recovery — not a warning at every 10-minute check.
    func noteInsightCheck(failures: [String], at now: Instant) {
        guard !failures.isEmpty else {
            if case .recovered(let span, let attempts)? = insightHealth.succeeded(at: now) {
                logger.notice("insights are recorded again after \(SpanWords.describe(span)), \(attempts) failed checks")
            }
            return
        }
        let error = failures.joined(separator: "; ")
        switch insightHealth.failed(error, at: now) {
        case .failing?:
            logger.warning("milestones and the weekly digest could not be recorded; checking again every \(SpanWords.describe(Self.insightCheckInterval)), rules and stats are unaffected",
                           metadata: ["error": "\(error)"])
        case .stillFailing(let span, let attempts)?:
            logger.warning("milestones and the weekly digest still cannot be recorded after \(SpanWords.describe(span)), \(attempts) attempts",
                           metadata: ["error": "\(error)"])
        default: break
        }
    }
}
