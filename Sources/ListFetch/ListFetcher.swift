import ScrollOffCore

/// Downloads one list with libcurl into a file: conditional GET, redirects, compression, timeouts,
/// a size cap and retries with back-off (all per `FetchPolicy`).
///
/// Each attempt runs on its own thread because a libcurl easy handle blocks and is not Sendable.
/// Cancelling the calling task aborts the transfer from libcurl's progress callback, within a
/// second even when the server has stalled.
public struct ListFetcher: Sendable {
    public var policy: FetchPolicy
    public var sleeper: Sleeper

    /// Sleeps with `Task.sleep`, so a cancelled task stops waiting at once.
    public static let taskSleeper: Sleeper = { span in
        try await Task.sleep(for: .milliseconds(span.milliseconds))
    }

    public init(policy: FetchPolicy = FetchPolicy(), sleeper: @escaping Sleeper = ListFetcher.taskSleeper) {
        self.policy = policy
        self.sleeper = sleeper
    }

    /// The schemes accepted at the start: libcurl fetches http and https (CURLOPT_PROTOCOLS_STR,
    /// the same for redirects); file:// is read by `FileSource`.
    public static let supportedSchemes: Set<String> = ["http", "https", "file"]

    /// Fetches `url` into `destinationPath` (created or truncated; mode 0600), reading and
    /// connecting only as `access` allows (whoever added the source).
    ///
    /// With `conditional` validators an http(s) server may answer 304, reported as
    /// `.notModified`; the destination then holds nothing useful. Errors that another attempt
    /// could fix (timeouts, 5xx, dropped connections) are retried up to `policy.attempts` times,
    /// waiting `policy.retryDelay` in between; the others are thrown at once.
    public func fetch(
        _ url: String,
        into destinationPath: String,
        conditional: ConditionalValidators? = nil,
        progress: ProgressHandler? = nil,
        access: SourceAccess = .administrator
    ) async throws(ListFetchError) -> FetchResult {
        guard let scheme = Self.scheme(of: url), Self.supportedSchemes.contains(scheme) else {
            throw .unsupportedURL(url: url)
        }
        // Conditional headers mean nothing to file:// and would only confuse a later 304 check.
        let conditional = (scheme == "file" || conditional?.isEmpty == true) ? nil : conditional
        var retried: [ListFetchError] = []
        var attempt = 1
        while true {
            if Task.isCancelled { throw .cancelled(url: url) }
            let request = CurlTransfer.Request(
                url: url, conditional: conditional, destinationPath: destinationPath,
                policy: policy, attempt: attempt, cancel: CancelFlag(), progress: progress, access: access
            )
            let outcome = await withTaskCancellationHandler {
                await DedicatedThread.run(name: "scrolloff-fetch") { CurlTransfer.perform(request) }
            } onCancel: {
                request.cancel.cancel()
            }
            switch outcome {
            case .success(var result):
                result.attempts = attempt
                result.retriedErrors = retried
                return result
            case .failure(let failure):
                guard failure.error.isRetryable, attempt < policy.attempts else { throw failure.error }
                retried.append(failure.error)
                let wait = policy.retryDelay(afterAttempt: attempt, retryAfter: failure.retryAfter)
                progress?(FetchProgress(attempt: attempt, receivedBytes: 0, expectedBytes: nil, failed: failure.error, retryIn: wait))
                do {
                    try await sleeper(wait)
                } catch {
                    throw .cancelled(url: url)
                }
                attempt += 1
            }
        }
    }

    /// The host a list URL names (nil for file:// URLs), for the always-allow list: the helper
    /// must never sink the names it downloads its own lists from (SPEC §1).
    /// Read by libcurl's URL parser (`ListSourceURL`), so it is the host the transfer connects to.
    public static func host(of url: String) -> String? {
        ListSourceURL(url)?.fetchedHost
    }

    /// The lowercased scheme before `://`, or nil when there is none.
    static func scheme(of url: String) -> String? {
        guard let range = url.range(of: "://") else { return nil }
        let scheme = url[..<range.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else {
            return nil
        }
        return scheme.lowercased()
    }
}
