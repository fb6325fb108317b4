import Logging

/// How one log event becomes one line of stderr.
///
/// - `journal`: stderr is connected to journald (`JOURNAL_STREAM`, see systemd.exec(5)). The line
///   starts with the sd-daemon(3) priority prefix `<N>`, which journald turns into the entry's
///   priority (`SyslogLevelPrefix=yes`, the default); journald adds the time itself.
/// - `plain`: a terminal or a file: `2026-11-22T01:02:03.456Z info scrolloff-dns: message key=value`.
///
/// Either way an event is exactly one line: newlines and other control characters in the message
/// or the metadata are escaped (`\n`, `\t`, `\u{1b}`), so one event can never forge another.
public struct LineLogFormat: Sendable, Equatable {
    public enum Style: Sendable, Equatable {
        case journal
        case plain
    }

    public var style: Style

    public init(style: Style) {
        self.style = style
    }

    /// syslog(3) priorities as sd-daemon(3) defines its `<N>` prefixes; swift-log's trace has no
    /// syslog level of its own and shares debug's.
    public static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7 // SD_DEBUG
        case .info: 6 // SD_INFO
        case .notice: 5 // SD_NOTICE
        case .warning: 4 // SD_WARNING
        case .error: 3 // SD_ERR
        case .critical: 2 // SD_CRIT
        }
    }

    /// The line for one event, ending in `\n`. `timestamp` is used by the plain style only.
    public func line(
        level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, timestamp: @autoclosure () -> String
    ) -> String {
        var line: String
        switch style {
        case .journal:
            line = "<\(Self.priority(of: level))>\(Self.escaped(label)): "
        case .plain:
            line = "\(timestamp()) \(level.rawValue) \(Self.escaped(label)): "
        }
        line += Self.escaped(message)
        for key in metadata.keys.sorted() {
            guard let value = metadata[key] else { continue }
            line += " \(Self.key(key))=\(Self.value(Self.flatten(value)))"
        }
        line += "\n"
        return line
    }

    /// A metadata value as text: nested dictionaries and arrays in a compact, stable form.
    static func flatten(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(flatten).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            "{" + dictionary.keys.sorted().map { "\($0)=\(dictionary[$0].map(flatten) ?? "")" }.joined(separator: ",") + "}"
        }
    }

    /// Keys are written bare; anything that would break `key=value` parsing becomes `_`.
    static func key(_ key: String) -> String {
        let cleaned = String(key.unicodeScalars.map { scalar -> Character in
            let breaksParsing = scalar == " " || scalar == "=" || scalar == "\"" || scalar.properties.generalCategory == .control
            return breaksParsing ? "_" : Character(scalar)
        })
        return cleaned.isEmpty ? "_" : cleaned
    }

    /// Values are bare when that is unambiguous, else double-quoted with `\` escapes (logfmt style).
    static func value(_ text: String) -> String {
        let needsQuotes = text.isEmpty || text.unicodeScalars.contains { scalar in
            scalar == " " || scalar == "=" || scalar == "\"" || scalar == "\\" || scalar.properties.generalCategory == .control
        }
        guard needsQuotes else { return text }
        return "\"" + escaped(text, quote: true) + "\""
    }

    /// Control characters as escapes, so the text stays on one line; `\` and `"` too inside quotes.
    static func escaped(_ text: String, quote: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\\" where quote: out += "\\\\"
            case "\"" where quote: out += "\\\""
            default:
                if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
