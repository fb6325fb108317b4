import ControlAPI
import Logging
import ScrollOffCore
import Store

/// The timer's look for milestones reached and the week's digest (SPEC §7): when it is
/// due next, the look itself, and how the looks go (failing ones are logged with the back-off of
/// failing state writes, `CommitHealth`). Each milestone and digest is recorded once: the store's
/// marks make a second look, a restart or a recomputation write nothing. The engine owns one.
struct InsightChecks {
    /// How often the timer looks for milestones reached; the digest moment is always looked at on time.
    static let interval = Span.minutes(10)

    /// Looked for when the timer starts, then at the first tick `interval` after the last look,
    /// and at each digest moment (which wakes the timer).
    private(set) var nextAt = Instant(millisecondsSince1970: .min)
    /// Failing looks, for the log's back-off.
    private var health = CommitHealth(firstLogInterval: InsightChecks.interval)

    /// Records, for each of `profiles`, the milestones reached and the week's digest when due. A
    /// digest missed while the helper was down is written at the next start (only the latest
    /// week's; older ones are gone by).
    /// - Returns: the digests written now, for the delivery hook, and the profiles whose look failed.
    /// `feed` hears of each event written, read back with its row id (`recordOnce` does not return it).
    mutating func look(profiles: [ProfileRuntime], store: any StateStore, now: Instant, logger: Logger, feed: EventFeed? = nil)
        -> (written: [(profile: String, report: StatsReport)], failures: [String]) {
        var next = now + Self.interval
        var written: [(profile: String, report: StatsReport)] = []
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
                        Self.publish(kind: .milestone, profile: p.name, store: store, to: feed)
                        logger.info("milestone reached", metadata: ["profile": "\(p.name)", "insights.milestone": "\(m.key)"])
                    }
                }
                let due = WeeklyDigest.latest(atOrBefore: now, calendar: p.calendar)
                // A week with nothing recorded before its Sunday has nothing to say (a helper first started on a
                // Sunday evening writes no digest of that one day).
                guard first < due.weekEnding else { continue }
                let key = WeeklyDigest.key(weekEnding: due.weekEnding)
                guard try !store.isMarked(key: key, profile: p.name) else { continue }
                let report = HelperEngine.report(.week, profile: p.name, days: days, today: due.weekEnding, calendar: p.calendar)
                let event = StoredEvent(profile: p.name, time: now, kind: .weeklyDigest,
                                        message: "Your week \(report.firstDay) to \(report.lastDay): " + report.summary.joined(separator: " "),
                                        payload: String(decoding: ControlJSON.encode(report), as: UTF8.self))
                if try store.recordOnce(key: key, event: event) {
                    Self.publish(kind: .weeklyDigest, profile: p.name, store: store, to: feed)
                    logger.info("weekly digest written", metadata: ["profile": "\(p.name)", "insights.week": "\(due.weekEnding)"])
                    written.append((p.name, report))
                }
            } catch {
                // Only books: try again at the next check.
                failures.append("\(p.name): \(error)")
            }
        }
        nextAt = next
        return (written, failures)
    }

    private static func publish(kind: EventKind, profile: String, store: any StateStore, to feed: EventFeed?) {
        guard let feed, let saved = try? store.latestEvent(kind: kind, profile: profile) else { return }
        feed.publish([saved])
    }

    /// Logs failing looks as failing state writes are logged (`CommitHealth`): the first at once,
    /// then summaries ever further apart, and the recovery — not a warning at every 10-minute look.
    mutating func note(failures: [String], at now: Instant, logger: Logger) {
        guard !failures.isEmpty else {
            if case .recovered(let span, let attempts)? = health.succeeded(at: now) {
                logger.notice("insights are recorded again after \(SpanWords.describe(span)), \(attempts) failed checks")
            }
            return
        }
        let error = failures.joined(separator: "; ")
        switch health.failed(error, at: now) {
        case .failing?:
            logger.warning("milestones and the weekly digest could not be recorded; checking again every \(SpanWords.describe(Self.interval)), rules and stats are unaffected",
                           metadata: ["error": "\(error)"])
        case .stillFailing(let span, let attempts)?:
            logger.warning("milestones and the weekly digest still cannot be recorded after \(SpanWords.describe(span)), \(attempts) attempts",
                           metadata: ["error": "\(error)"])
        default: break
        }
    }
}
