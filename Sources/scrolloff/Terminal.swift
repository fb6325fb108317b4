import ControlAPI
import Foundation
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

/// Output helpers: colour only on a terminal and never with NO_COLOR (https://no-color.org).
enum Terminal {
    static let stdoutIsTerminal = isatty(1) == 1

    static let colours: Bool = {
        let environment = ProcessInfo.processInfo.environment
        if environment["NO_COLOR"].map({ !$0.isEmpty }) == true { return false }
        if environment["TERM"] == "dumb" { return false }
        return stdoutIsTerminal
    }()

    static func green(_ text: String) -> String { colours ? "\u{1B}[32m\(text)\u{1B}[0m" : text }
    static func yellow(_ text: String) -> String { colours ? "\u{1B}[33m\(text)\u{1B}[0m" : text }
    static func bold(_ text: String) -> String { colours ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    static func dim(_ text: String) -> String { colours ? "\u{1B}[2m\(text)\u{1B}[0m" : text }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    static func printJSON(_ value: some Encodable) {
        var data = ControlJSON.encode(value, pretty: true)
        data.append(0x0A)
        FileHandle.standardOutput.write(data)
    }

    /// Writes without a newline and flushes, for the progress line.
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Numbers first, in plain words (the SPEC's style: "12,408 names, refreshed 3 min ago").
enum Format {
    /// 12408 → "12,408" (no locale: output must be the same for every user and in tests).
    static func count(_ value: Int) -> String { CountWords.grouped(value) }

    static func names(_ value: Int) -> String { "\(count(value)) \(value == 1 ? "name" : "names")" }

    /// "just now", "3 min 20 s ago", "2 h 5 min ago", "4 d 2 h ago": `SpanWords`, rounded down.
    static func ago(_ date: Date, now: Date) -> String {
        let seconds = Int64(now.timeIntervalSince(date).rounded(.down))
        if seconds < 60 { return "just now" }
        return SpanWords.describe(seconds: seconds, rounding: .down) + " ago"
    }

    /// "in 3 min", "in 23 h 5 min"; "now" when due. Rounded up: never sooner than true.
    static func until(_ date: Date, now: Date) -> String {
        let seconds = Int64(date.timeIntervalSince(now).rounded(.up))
        if seconds <= 0 { return "now" }
        return "in " + SpanWords.describe(seconds: seconds, rounding: .up)
    }

    /// Bytes in binary units with one decimal.
    static func bytes(_ value: Int64) -> String {
        func tenths(_ unit: Int64) -> String {
            let t = value / unit * 10 + value % unit * 10 / unit
            return t % 10 == 0 ? "\(t / 10)" : "\(t / 10).\(t % 10)"
        }
        if value >= 1 << 30 { return tenths(1 << 30) + " GiB" }
        if value >= 1 << 20 { return tenths(1 << 20) + " MiB" }
        if value >= 1 << 10 { return tenths(1 << 10) + " KiB" }
        return "\(value) bytes"
    }
}
