import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation
import ScrollOffCore

/// Your numbers and your history: stats, the weekly digest, events and the export (SPEC §7, §12).
enum InsightVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Stats.self, Digest.self, Events.self, Export.self] }
}

/// `scrolloff stats [--day|--week|--month|--year]` (SPEC §7): a compact dashboard, the
/// numbers first, then sparklines and the hour heatmap. Every figure comes from the helper's one
/// `Insights` computation; `--json` gives all of them.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your numbers: urges resisted, time protected, credit earned and spent, patterns.")

    @OptionGroup var options: GlobalOptions

    @Flag(exclusivity: .exclusive, help: "The period (default: today).")
    var period: StatsPeriod = .day

    func run() throws {
        let stats = try options.call(ControlEndpoints.stats, query: [(ControlQuery.period, period.rawValue)])
        options.emit(stats) { print(StatsDashboard.text(stats), terminator: "") }
    }
}

extension StatsPeriod: EnumerableFlag {}

/// The dashboard's text; colour only where `Terminal` allows it (a terminal, no NO_COLOR).
enum StatsDashboard {
    static func text(_ s: StatsReport, title: String? = nil) -> String {
        var out = ""
        func line(_ text: String = "") { out += text + "\n" }
        func row(_ label: String, _ value: String) { line(Terminal.dim(label.padding(toLength: 11, withPad: " ", startingAt: 0)) + value) }
        let range = s.firstDay == s.lastDay ? s.firstDay : "\(s.firstDay) to \(s.lastDay)"
        line(Terminal.bold(title ?? "\(s.period.words.prefix(1).uppercased())\(s.period.words.dropFirst())") + " · " + range
             + (s.profile == "default" ? "" : " · \(s.profile)"))
        for sentence in s.summary { line(sentence) }
        line()
        // A year of days is drawn as weeks, so the line stays under 60 columns.
        let chunk = s.trend.count > 60 ? 7 : 1
        let unit = chunk == 7 ? "by week" : "by day"
        let urges = Sparkline.chunked(s.trend.map(\.urges), by: chunk)
        let protected = Sparkline.chunked(s.trend.map(\.protectedSeconds), by: chunk)
        let open = Sparkline.chunked(s.trend.map(\.openSeconds), by: chunk)
        let share = s.resistedPercent.map { " (\($0)%)" } ?? ""
        row("Urges", Terminal.green(Sparkline.line(urges)) + "  \(s.urgesResisted) of \(s.urges) resisted\(share)")
        row("Protected", Terminal.green(Sparkline.line(protected)) + "  " + TimeWords.span(seconds: s.protectedSeconds))
        row("Time spent", Sparkline.line(open) + "  " + TimeWords.span(seconds: s.openSeconds))
        line(Terminal.dim(String(repeating: " ", count: 11) + "\(s.trend.first?.day ?? "") → \(s.trend.last?.day ?? ""), \(unit)"))
        row("Credit", "earned \(TimeWords.balance(seconds: s.earnedSeconds)) · spent \(TimeWords.balance(seconds: s.spentSeconds)) · "
            + "\(Plural.count(s.peeks, "peek")) · \(Plural.count(s.tokens, "token")) · \(Plural.count(s.exercises, "exercise")) done")
        // The period against the one before, then always the last 7 and 30 days against the ones
        // before them (SPEC §7: week-over-week and month-over-month), without saying one twice.
        var changes: [String] = []
        if let c = s.change, s.period == .year || (s.period == .day && c.previousUrges > 0) {
            changes.append(change(c, against: s.period.previousWords))
        }
        changes.append(change(s.weekOverWeek, against: StatsPeriod.week.previousWords))
        changes.append(change(s.monthOverMonth, against: StatsPeriod.month.previousWords))
        for (i, text) in changes.enumerated() { row(i == 0 ? "Change" : "", text) }
        row("Hours", Sparkline.line(s.heatmap) + (s.peakHours.map { "  most urges \($0.start)–\($0.end) h" } ?? "  no urges"))
        line(String(repeating: " ", count: 11) + Terminal.dim(Sparkline.hourAxis))
        if !s.topEntries.isEmpty {
            row("Top", s.topEntries.map { "\($0.entry) \($0.urges)" }.joined(separator: " · "))
        }
        let weekdays = [s.strongestWeekday.map { "strongest \($0)" }, s.toughestWeekday.map { "most urges on \($0)" }].compactMap { $0 }
        if !weekdays.isEmpty { row("Weekdays", weekdays.joined(separator: " · ")) }
        var bests: [String] = []
        if let day = s.bests.mostResistedDay { bests.append("\(s.bests.mostResisted) resisted on \(day)") }
        if let day = s.bests.mostProtectedDay { bests.append("\(TimeWords.span(seconds: s.bests.mostProtectedSeconds)) protected on \(day)") }
        if s.bests.longestStreakDays > 0 { bests.append("longest streak \(Plural.count(s.bests.longestStreakDays, "day"))") }
        if !bests.isEmpty { row("Bests", bests.joined(separator: " · ")) }
        row("Streak", Plural.count(s.streakDays, "day"))
        // Everything the books hold, rolled-up days included (SPEC §12).
        let l = s.lifetime
        row("Lifetime", "\(l.resisted) of \(l.urges) resisted" + (l.resistedPercent.map { " (\($0)%)" } ?? "")
            + " · protected \(TimeWords.span(seconds: l.protectedSeconds)) · time spent \(TimeWords.span(seconds: l.openSeconds))")
        row("", "earned \(TimeWords.balance(seconds: l.earnedSeconds)) · spent \(TimeWords.balance(seconds: l.spentSeconds)) · "
            + "\(Plural.count(l.peeks, "peek")) · \(Plural.count(l.tokens, "token")) · \(Plural.count(l.exercises, "exercise")) done")
        // Milestones reached within the period; older ones stay in `--json` and `events`.
        for m in s.milestones where m.reachedOn >= s.firstDay { row("Milestone", Terminal.green(m.message)) }
        for note in s.notes { line(Terminal.dim(note)) }
        return out
    }

    /// "vs last week: urges +5% · resisted +5% · protected ±0%".
    static func change(_ c: InsightChange, against words: String) -> String {
        "vs \(words): urges \(percent(c.urgesPercent)) · resisted \(percent(c.resistedPercent)) · protected \(percent(c.protectedPercent))"
    }

    /// "+13%", "−5%", "—" when there is nothing to compare with.
    static func percent(_ p: Int?) -> String {
        guard let p else { return "—" }
        return p > 0 ? "+\(p)%" : p < 0 ? "−\(-p)%" : "±0%"
    }
}

/// `scrolloff digest` (SPEC §13): the latest weekly digest, written Sunday at 19:00 in the
/// profile's zone.
struct Digest: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your week in numbers: the digest written Sunday evening.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.digest)
        options.emit(answer) {
            guard let digest = answer.digest else {
                print("No weekly digest yet. The first is written \(TimeWords.clock(answer.nextAt, now: answer.now)), on Sunday evening.")
                return
            }
            print(StatsDashboard.text(digest, title: "Your week"), terminator: "")
            print(Terminal.dim("Next digest: \(TimeWords.clock(answer.nextAt, now: answer.now))."))
        }
    }
}

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

/// `scrolloff export --csv|--json`: the ledger and events on stdout (SPEC §12). `--csv` is RFC 4180
/// text; `--json` is `{"format": "json", "rows": [...]}` with one typed object per row (SPEC §12).
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write your ledger and events to stdout as CSV (--csv) or typed JSON rows (--json).")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "RFC 4180 CSV, one line per ledger row or event.")
    var csv = false

    func validate() throws {
        if csv && options.json { throw ValidationError("Choose one format: --csv or --json.") }
        if !csv && !options.json { throw ValidationError("Say the format: `scrolloff export --csv > scrolloff.csv` or `scrolloff export --json`.") }
    }

    func run() throws {
        let client = options.client(timeoutSeconds: 120)
        if options.json {
            let response = try options.talk { () throws(ControlClientError) in try client.call(ControlEndpoints.exportRows) }
            Terminal.printJSON(response)
        } else {
            let response = try options.talk { () throws(ControlClientError) in try client.call(ControlEndpoints.export) }
            FileHandle.standardOutput.write(Data(response.text.utf8))
        }
    }
}
