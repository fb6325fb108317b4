import ArgumentParser
import ControlAPI
import Foundation
import ScrollOffCore

/// `scrolloff events [--since DATE]`: what happened, oldest first.
struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what happened: rule changes and who made them, bypasses the rules held, peeks, urges, clock changes.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("From this local day (YYYY-MM-DD) or instant (RFC 3339).", valueName: "DATE"))
    var since: String?

    func validate() throws {
        if let since, Self.instant(since) == nil {
            throw ValidationError("'\(since)' is not a date; write 2026-11-21 or 2026-11-21T18:00:00Z.")
        }
    }

    /// A local day's start, or an RFC 3339 instant.
    static func instant(_ text: String) -> Date? {
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone.current
        day.dateFormat = "yyyy-MM-dd"
        return day.date(from: text)
    }

    func run() throws {
        let from = since.flatMap(Self.instant).map { ISO8601DateFormatter().string(from: $0) }
        let answer = try options.call(ControlEndpoints.events, query: [(ControlQuery.since, from)])
        options.emit(answer) {
            guard !answer.events.isEmpty else {
                print("Nothing recorded\(since.map { " since \($0)" } ?? "") yet.")
                return
            }
            let now = answer.now ?? TimeWords.now()
            if let summary = EventWords.summary(answer.events, since: since) { print(summary) }
            for event in answer.events { print(EventWords.line(event, now: now)) }
        }
    }
}
