import ScrollOffCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif


/// Set from any thread to abort a running transfer; read by the libcurl callbacks.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func cancel() { flag.store(true, ordering: .relaxed) }
    var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

/// The validators and hints of the response being received, parsed from raw header lines.
struct CapturedHeaders {
    var etag: String?
    var lastModified: String?
    /// `Retry-After` in delta-seconds form only; the HTTP-date form is rare for 429/503 and would
    /// need a wall clock to interpret.
    var retryAfterSeconds: Int64?

    /// Non-empty printable ASCII of at most 1 KiB: the only values stored and sent back.
    static func isSafeValue(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 1024 && value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// Feeds one header line as libcurl delivers it (CRLF included). A status line starts a new
    /// response (after a redirect or a 100 Continue), so earlier validators are dropped: only the
    /// final response's ETag describes the bytes we keep.
    mutating func consume(line: String) {
        if line.hasPrefix("HTTP/") {
            self = CapturedHeaders()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingSpaces()
        // Only printable ASCII is stored and echoed back; anything else cannot be a valid
        // entity tag or HTTP-date (RFC 9110 §8.8.3, §5.6.7) and must not reach a request header.
        guard Self.isSafeValue(value) else { return }
        switch name {
        case "etag": etag = value
        case "last-modified": lastModified = value
        case "retry-after": retryAfterSeconds = Int64(value)
        default: break
        }
    }
}

extension StringProtocol {
    /// Drops leading and trailing spaces, tabs, CR and LF. Works on Unicode scalars because in
    /// Swift "\r\n" is one Character, equal to neither "\r" nor "\n".
    func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
              let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

/// Emits at most one progress report per interval, and a final one when asked. It reads the
/// monotonic clock only to pace a display, never to decide anything about a list.
final class ProgressThrottle {
    private let handler: ProgressHandler?
    private let attempt: Int
    private let interval: Duration
    private let clock = ContinuousClock()
    private var lastReport: ContinuousClock.Instant?
    private var lastReceived: Int64 = -1

    init(handler: ProgressHandler?, attempt: Int, interval: Span) {
        self.handler = handler
        self.attempt = attempt
        self.interval = .milliseconds(interval.milliseconds)
    }

    func offer(received: Int64, expected: Int64) {
        guard handler != nil, received != lastReceived else { return }
        let now = clock.now
        if let lastReport, now - lastReport < interval { return }
        lastReport = now
        emit(received: received, expected: expected)
    }

    func finish(received: Int64, expected: Int64) {
        guard handler != nil, received != lastReceived else { return }
        emit(received: received, expected: expected)
    }

    private func emit(received: Int64, expected: Int64) {
        lastReceived = received
        handler?(FetchProgress(attempt: attempt, receivedBytes: received, expectedBytes: expected > 0 ? expected : nil))
    }
}

/// The state the libcurl callbacks of one attempt share. Created, used and released on the
/// transfer thread only; libcurl reaches it through an unretained pointer.
final class TransferContext {
    let fileDescriptor: Int32
    let maxBytes: Int64
    let cancel: CancelFlag
    let progress: ProgressThrottle
    var headers = CapturedHeaders()
    var bytesWritten: Int64 = 0
    var capExceeded = false
    var writeErrno: Int32 = 0
    /// Set for a member's http(s) source: what its sockets may connect to.
    var addressRule: AddressRule?
    /// The last address the rule refused, and why, for the error.
    var refusedAddress: (address: String, kind: String)?
    /// The copy's writeback, started a step at a time as the body arrives, so the fsync after the
    /// transfer does not write ~30 MB in one system call (`StepwiseIO`).
    var writeback: StepwiseIO.Writeback

    init(fileDescriptor: Int32, maxBytes: Int64, cancel: CancelFlag, progress: ProgressThrottle) {
        self.fileDescriptor = fileDescriptor
        writeback = StepwiseIO.Writeback(fileDescriptor: fileDescriptor)
        self.maxBytes = maxBytes
        self.cancel = cancel
        self.progress = progress
    }

    /// Streams one chunk of the (decompressed) body to disk. The size cap is enforced here as well
    /// as through CURLOPT_MAXFILESIZE_LARGE because chunked or compressed bodies announce no
    /// length that libcurl could check up front. Returning less than the chunk aborts the transfer.
    ///
    /// libcurl hands over at most CURL_MAX_WRITE_SIZE (16 KiB) a call, decompressed or not, so
    /// each write(2) here is small; what grows with the copy is its writeback, started in steps.
    func write(_ chunk: UnsafeRawBufferPointer) -> Int {
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return 0 }
        if cancel.isCancelled { return 0 }
        if bytesWritten + Int64(chunk.count) > maxBytes {
            capExceeded = true
            return 0
        }
        var offset = 0
        while offset < chunk.count {
            let n = posixWrite(fileDescriptor, base + offset, chunk.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                writeErrno = errno
                return 0
            }
            offset += n
        }
        bytesWritten += Int64(chunk.count)
        writeback.wrote(upTo: bytesWritten)
        // A write error the disk reported to the writeback's wait: the final fsync would not
        // report it again, so the transfer fails here (`StepwiseIO.Writeback`).
        if writeback.error != 0 {
            writeErrno = writeback.error
            return 0
        }
        return chunk.count
    }
}
