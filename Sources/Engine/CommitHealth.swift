import ScrollOffCore

/// How the state writes are going, so a disk that stays full is said once, then less and less often
/// with a summary (`still failing for 12 min, 43 attempts`), and shown by `doctor` — instead of a log
/// line per retry. Enforcement does not wait for it: a failed write still publishes what time
/// changed (SPEC §3 "Enforcement at every instant"); only the books wait.
///
/// Any background task that fails again and again logs through one of these (the project's rule:
/// said once, then summaries ever further apart): the hosts-file writer and the insight marks too.
package struct CommitHealth: Sendable {
    /// What to log after a write.
    package enum Note: Equatable, Sendable {
        /// The first failure of a run of them.
        case failing
        /// A summary while failures go on.
        case stillFailing(for: Span, attempts: Int)
        /// The first success after failures.
        case recovered(after: Span, attempts: Int)
    }

    /// The first summary comes this long after the first failure (unless a task that retries less
    /// often names its own); each later one twice as long after the one before, up to ``longestLogInterval``.
    static let firstLogInterval = Span.minutes(1)
    static let longestLogInterval = Span.hours(1)
    /// Retries after a failed timer write: 1 s, doubling, at most this (the ledger catches up within
    /// it once space is back).
    static let longestRetryDelay = Span.seconds(8)

    package private(set) var failingSince: Instant?
    package private(set) var attempts = 0
    package private(set) var lastError: String?
    private var nextLogAt: Instant?
    private let firstLogInterval: Span
    private var logInterval: Span

    /// - Parameter firstLogInterval: when the first summary is due after the first failure; a task
    ///   that retries every 10 minutes starts at 10, so its summaries double from its first retry.
    package init(firstLogInterval: Span = CommitHealth.firstLogInterval) {
        self.firstLogInterval = firstLogInterval
        logInterval = firstLogInterval
    }

    package var isFailing: Bool { failingSince != nil }

    package mutating func failed(_ error: String, at now: Instant) -> Note? {
        attempts += 1
        lastError = error
        guard let since = failingSince, let due = nextLogAt else {
            failingSince = now
            logInterval = firstLogInterval
            nextLogAt = now + logInterval
            return .failing
        }
        guard now >= due else { return nil }
        logInterval = min(logInterval * 2, Self.longestLogInterval)
        nextLogAt = now + logInterval
        return .stillFailing(for: now - since, attempts: attempts)
    }

    package mutating func succeeded(at now: Instant) -> Note? {
        guard let since = failingSince else { return nil }
        let note = Note.recovered(after: now - since, attempts: attempts)
        self = CommitHealth(firstLogInterval: firstLogInterval)
        return note
    }

    /// How long the timer waits before retrying after the current run of failures.
    package var retryDelay: Span {
        let doubled = Span.seconds(1) * Int64(1 << min(max(attempts - 1, 0), 10))
        return min(doubled, Self.longestRetryDelay)
    }
}
