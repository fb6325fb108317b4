import ScrollOffCore

/// The refresh record of one list, as `RefreshPlan` needs it.
public struct RefreshHistory: Sendable, Equatable {
    public var lastSuccess: Instant?
    public var lastAttempt: Instant?
    /// Failed attempts since the last success; 0 when the last attempt succeeded.
    public var consecutiveFailures: Int

    public init(lastSuccess: Instant? = nil, lastAttempt: Instant? = nil, consecutiveFailures: Int = 0) {
        self.lastSuccess = lastSuccess
        self.lastAttempt = lastAttempt
        self.consecutiveFailures = consecutiveFailures
    }
}

/// When each list is refreshed next: a pure function of its history and name, no clock read.
///
/// After a success the next refresh is `period` later plus a jitter derived from the list's name,
/// so a fleet of machines (or many lists on one) that restart together does not hit the list
/// servers in the same minute, and a restart never reshuffles the schedule. After a failure it
/// retries sooner, backing off from `retryAfterFailure` and doubling up to `period`.
public struct RefreshPlan: Sendable, Equatable {
    public var period: Span
    public var retryAfterFailure: Span
    /// Largest jitter added after a success; retries use at most a quarter of their delay.
    public var jitterWindow: Span

    public init(period: Span = .hours(24), retryAfterFailure: Span = .hours(1), jitterWindow: Span = .hours(1)) {
        self.period = max(period, .minutes(1))
        self.retryAfterFailure = min(max(retryAfterFailure, .minutes(1)), self.period)
        self.jitterWindow = min(max(jitterWindow, .zero), self.period)
    }

    /// The name's fixed place in `[0, window)`, from FNV-1a 64 of its bytes: spread evenly,
    /// identical on every run.
    public func jitter(for name: ListName, within window: Span) -> Span {
        guard window.milliseconds > 0 else { return .zero }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.rawValue.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Span(milliseconds: Int64(hash % UInt64(window.milliseconds)))
    }

    /// The wait after `consecutiveFailures` failures (≥ 1): 1 h, 2 h, 4 h … capped at `period`.
    public func retryDelay(consecutiveFailures: Int) -> Span {
        let doublings = Int64(min(max(consecutiveFailures - 1, 0), 30))
        let delay = retryAfterFailure.milliseconds.multipliedReportingOverflow(by: Int64(1) << doublings)
        return delay.overflow ? period : min(Span(milliseconds: delay.partialValue), period)
    }

    /// When the list should be refreshed next, or nil when it never was tried (refresh at once).
    public func nextRefresh(for name: ListName, history: RefreshHistory) -> Instant? {
        if history.consecutiveFailures > 0 {
            guard let lastAttempt = history.lastAttempt else { return nil }
            let delay = retryDelay(consecutiveFailures: history.consecutiveFailures)
            let window = min(jitterWindow, Span(milliseconds: delay.milliseconds / 4))
            return lastAttempt + delay + jitter(for: name, within: window)
        }
        guard let lastSuccess = history.lastSuccess else { return nil }
        return lastSuccess + period + jitter(for: name, within: jitterWindow)
    }

    public func isDue(_ name: ListName, history: RefreshHistory, now: Instant) -> Bool {
        guard let next = nextRefresh(for: name, history: history) else { return true }
        return next <= now
    }

    /// Older than two periods (or never refreshed): `scrolloff doctor` reports it (SPEC §11).
    public func isStale(_ history: RefreshHistory, now: Instant) -> Bool {
        guard let lastSuccess = history.lastSuccess else { return true }
        return now - lastSuccess > period * 2
    }

    /// A one-word state for `scrolloff lists list` and `doctor`.
    public func health(of metadata: ListMetadata, now: Instant) -> ListHealth {
        let history = metadata.history
        if history.lastAttempt == nil { return .neverFetched }
        if isStale(history, now: now) { return metadata.hasCopy ? .stale : .failing(servingLastGood: false) }
        if history.consecutiveFailures > 0 { return .failing(servingLastGood: metadata.hasCopy) }
        return .fresh
    }
}

public enum ListHealth: Sendable, Equatable {
    /// Never tried yet.
    case neverFetched
    /// The last refresh succeeded within two periods.
    case fresh
    /// The last refresh failed; the last good copy stays in force when there is one.
    case failing(servingLastGood: Bool)
    /// A copy is in force but no refresh succeeded for two periods.
    case stale
}
