import Logging
import Synchronization

/// Keeps every line a logger is given, so a test can assert what was said (a warning once, not per
/// attempt; a reload's summary; a level that reaches every copy of a logger). The one capturing
/// `LogHandler` for all test targets, which cannot import one another; never linked into a product.
public final class CapturedLog: Sendable {
    private struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    private let store = Mutex<[Line]>([])

    public init() {}

    /// Each line as "level message", in the order logged.
    public var lines: [String] { store.withLock { $0.map { "\($0.level) \($0.message)" } } }

    /// Each line as "level message key=value …", with the call's metadata sorted by key, for tests
    /// that check the fields a line carries.
    public var linesWithMetadata: [String] {
        store.withLock { lines in
            lines.map { line in
                let fields = line.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                return (["\(line.level) \(line.message)"] + fields).joined(separator: " ")
            }
        }
    }

    /// A logger whose lines at `level` and above land here.
    public func logger(label: String = "test", level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: label) { _ in Handler(sink: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let sink: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let line = Line(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:])
            sink.store.withLock { $0.append(line) }
        }
    }
}
