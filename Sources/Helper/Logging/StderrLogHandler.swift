#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization

/// swift-log to stderr, one line per event (`LineLogFormat`), journald-aware.
///
/// Lines are written whole under one process-wide lock, so lines from several threads never
/// interleave. A single write(2) is not enough on its own: under systemd stderr is journald's Unix
/// *stream* socket (systemd.exec(5), `StandardError=journal`), not a pipe, so PIPE_BUF atomicity
/// does not apply and a long line can be sent in parts that another thread's write splits. The
/// lock is taken only when a line is logged, which the DNS path does not do per query.
public struct StderrLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    let format: LineLogFormat

    public init(label: String, format: LineLogFormat) {
        self.label = label
        self.format = format
    }

    /// For `LoggingSystem.bootstrap`: the journal style when stderr is the journal's stream.
    public static func bootstrap(environment: [String: String]) -> @Sendable (String) -> any LogHandler {
        let format = LineLogFormat(style: stderrIsJournal(environment: environment) ? .journal : .plain)
        return { label in StderrLogHandler(label: label, format: format) }
    }

    /// True when `JOURNAL_STREAM` names the device and inode of our stderr, as systemd.exec(5)
    /// says to check: an inherited variable with stderr redirected elsewhere does not count.
    public static func stderrIsJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        if let error = event.error, merged["error"] == nil { merged["error"] = "\(error)" }
        let line = format.line(
            level: event.level, label: label, message: event.message.description, metadata: merged,
            timestamp: Self.timestamp())
        Self.write(line)
    }

    /// UTC, to the millisecond: `2026-11-22T01:02:03.456Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = now.tv_nsec / 1_000_000
        let milliText = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(milliText)Z"
    }

    /// Serializes whole lines; a partial write is finished before the next line starts.
    private static let writeLock = Mutex(())

    static func write(_ line: String) {
        var line = line
        line.withUTF8 { bytes in writeLock.withLock { _ in writeAll(bytes) } }
    }

    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(STDERR_FILENO, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return // stderr is gone; nothing better to do with a log line
            }
            offset += written
        }
    }
}
