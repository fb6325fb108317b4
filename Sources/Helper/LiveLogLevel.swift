import Logging
import Synchronization

/// The log level in force, changed by a configuration reload without rebuilding every `Logger`
/// the services already hold (swift-log loggers are values, copied into each service).
public final class LiveLogLevel: Sendable {
    private let raw: Atomic<Int>

    public init(_ level: Logger.Level) { raw = Atomic(Self.index(level)) }

    public var level: Logger.Level {
        let i = raw.load(ordering: .relaxed)
        return i < Logger.Level.allCases.count ? Logger.Level.allCases[i] : .info
    }

    public func set(_ level: Logger.Level) { raw.store(Self.index(level), ordering: .relaxed) }

    private static func index(_ level: Logger.Level) -> Int { Logger.Level.allCases.firstIndex(of: level) ?? 2 }

    /// A logger that writes through `base` (whatever handler the process bootstrapped: stderr,
    /// journald) at the level this object holds now, read at every log call.
    public func logger(over base: Logger) -> Logger {
        var through = base
        through.logLevel = .trace // the filtering happens here, not in the base
        return Logger(label: base.label) { _ in LiveLevelHandler(base: through, level: self) }
    }
}

/// Passes each message on to the process's handler when the live level lets it through.
struct LiveLevelHandler: LogHandler {
    let base: Logger
    let level: LiveLogLevel
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { level.level }
        // Setting the level of one logger copy sets it for all: it is the process's one level.
        nonmutating set { level.set(newValue) }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        base.log(level: event.level, event.message, metadata: merged.isEmpty ? nil : merged, source: event.source,
                 file: event.file, function: event.function, line: event.line)
    }
}
