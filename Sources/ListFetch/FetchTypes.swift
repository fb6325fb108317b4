import ScrollOffCore

/// The cache validators of a stored copy, sent back as `If-None-Match` and `If-Modified-Since`
/// (RFC 9110 §13.1.2, §13.1.3) so an unchanged list costs one small 304 answer.
public struct ConditionalValidators: Sendable, Equatable, Codable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// What a successful fetch produced.
public struct FetchResult: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A complete body is on disk at the destination, fsynced.
        case downloaded
        /// The server answered 304: the stored copy is current and the destination holds nothing useful.
        case notModified
    }

    public var kind: Kind
    /// Bytes written to the destination, after decompression.
    public var bytesWritten: Int64
    /// Validators of the final response; for a 304, those it repeated (RFC 9110 §15.4.5).
    public var validators: ConditionalValidators
    /// The final HTTP status, or nil for file:// URLs.
    public var httpStatus: Int?
    /// The URL of the last response after redirects.
    public var effectiveURL: String
    public var redirectCount: Int
    /// Attempts used, 1 when the first one succeeded.
    public var attempts: Int
    /// Why earlier attempts failed, oldest first.
    public var retriedErrors: [ListFetchError]
}

/// One progress report. Counts are bytes on the wire (compressed when the server compresses), so
/// `receivedBytes` and `expectedBytes` always compare.
public struct FetchProgress: Sendable, Equatable {
    public var attempt: Int
    public var receivedBytes: Int64
    /// From Content-Length; nil for chunked bodies and until the headers arrive.
    public var expectedBytes: Int64?
    /// Set when attempt `attempt` failed and another follows after `retryIn`: why it failed.
    public var failed: ListFetchError?
    public var retryIn: Span?

    public init(attempt: Int, receivedBytes: Int64, expectedBytes: Int64?, failed: ListFetchError? = nil, retryIn: Span? = nil) {
        self.attempt = attempt
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.failed = failed
        self.retryIn = retryIn
    }
}

/// Called on the transfer thread, at most once per `FetchPolicy.progressInterval` plus once at the
/// end of each attempt. Keep it quick: the transfer waits while it runs.
public typealias ProgressHandler = @Sendable (FetchProgress) -> Void

/// Waits between attempts. Injected so tests exercise the real retry path without real minutes;
/// it throws when the surrounding task is cancelled.
public typealias Sleeper = @Sendable (Span) async throws -> Void
