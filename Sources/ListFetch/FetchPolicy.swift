import ScrollOffCore

/// How one list download behaves: limits, timeouts, retries. The defaults suit a daily refresh of
/// public blocklists over a home connection; tests shrink the timeouts.
public struct FetchPolicy: Sendable, Equatable {
    /// 64 MiB: the largest public hosts lists are about 15 MiB uncompressed, so four times that
    /// still fits while a runaway or hostile server cannot fill the disk.
    public static let defaultMaxBytes: Int64 = 64 << 20
    /// The version the User-Agent names unless the caller passes the binary's own.
    public static let defaultVersion = "0.1.0"

    /// `scrolloff/<version> (+list refresh)`: names the project so list maintainers can tell who
    /// fetches their lists and why (RFC 9110 §10.1.5).
    public static func userAgent(version: String) -> String { "scrolloff/\(version) (+list refresh)" }

    /// Largest body accepted, counted after decompression (what lands on disk).
    public var maxBytes: Int64
    public var connectTimeout: Span
    /// Hard limit for one attempt, connect included.
    public var totalTimeout: Span
    /// A transfer slower than `lowSpeedBytesPerSecond` for `stallTimeout` counts as stalled.
    /// libcurl measures this in whole seconds, so `stallTimeout` is rounded up to a second.
    public var lowSpeedBytesPerSecond: Int
    public var stallTimeout: Span
    /// At most this many redirects are followed (the limit is 5).
    public var maxRedirects: Int
    /// Attempts per fetch, the first included.
    public var attempts: Int
    /// Wait before the second attempt; each later wait doubles, capped at `maxRetryDelay`.
    public var firstRetryDelay: Span
    public var maxRetryDelay: Span
    public var userAgent: String
    /// Progress reports are throttled to at most one per interval (plus a final one).
    public var progressInterval: Span

    public init(
        maxBytes: Int64 = FetchPolicy.defaultMaxBytes,
        connectTimeout: Span = .seconds(15),
        totalTimeout: Span = .minutes(10),
        lowSpeedBytesPerSecond: Int = 256,
        stallTimeout: Span = .seconds(30),
        maxRedirects: Int = 5,
        attempts: Int = 3,
        firstRetryDelay: Span = .seconds(5),
        maxRetryDelay: Span = .minutes(1),
        userAgent: String = FetchPolicy.userAgent(version: FetchPolicy.defaultVersion),
        progressInterval: Span = Span(milliseconds: 100)
    ) {
        self.maxBytes = maxBytes
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.lowSpeedBytesPerSecond = lowSpeedBytesPerSecond
        self.stallTimeout = stallTimeout
        self.maxRedirects = maxRedirects
        self.attempts = max(1, attempts)
        self.firstRetryDelay = firstRetryDelay
        self.maxRetryDelay = maxRetryDelay
        self.userAgent = userAgent
        self.progressInterval = progressInterval
    }

    /// The wait after failed attempt number `failedAttempt` (1-based): 5 s, 10 s, 20 s … capped.
    /// A server's `Retry-After` (RFC 9110 §10.2.3) lengthens the wait, never beyond the cap.
    public func retryDelay(afterAttempt failedAttempt: Int, retryAfter: Span? = nil) -> Span {
        let doublings = Int64(min(max(failedAttempt - 1, 0), 20))
        let backoff = min(firstRetryDelay * (Int64(1) << doublings), maxRetryDelay)
        guard let retryAfter else { return backoff }
        return min(max(backoff, retryAfter), maxRetryDelay)
    }
}
