import ArgumentParser
import ControlAPI
import ScrollOffCore

/// What holds now: the status, and the services you can block by name (SPEC §1, §13).
enum StatusVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Status.self, Services.self] }
}

/// `scrolloff status`: what is blocked, what opens when, and what is left (SPEC §13).
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what is blocked, what opens when, and your balance.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let status = try options.call(ControlEndpoints.status)
        options.emit(status) {
            let now = status.now
            print("Balance \(Terminal.bold(TimeWords.balance(seconds: status.balanceSeconds))) · "
                + "\(Plural.count(status.peeksLeftToday, "peek")) left today · "
                + "\(Plural.count(status.tokensLeftMonth, "token")) left this month")
            if let pause = status.pause, let until = pause.pausedUntil {
                let reason = pause.reason.map { " (\($0))" } ?? ""
                print(Terminal.yellow("Paused\(reason): everything but the allow list is blocked until \(TimeWords.until(until, now: now))."))
            }
            for a in status.allowances ?? [] {
                let left = a.allowanceLeftSeconds.map { "\(TimeWords.span(seconds: $0)) left today" } ?? "none today"
                print("Allowance: \(a.words) · \(left)")
            }
            if let until = status.strictCurfewUntil {
                print(Terminal.yellow("Strict curfew: everything but the allow list is blocked until \(TimeWords.until(until, now: now))."))
            }
            if status.entries.isEmpty {
                print("Nothing is blocked yet. `scrolloff block instagram` blocks it and starts earning you credit.")
            }
            for line in EntryWords.groupedLines(status.entries, now: now) { print(line) }
            for session in status.focus {
                let reason = session.reason.map { " · “\($0)”" } ?? ""
                print("Focus: \(shortList(session.entries)) blocked until \(TimeWords.until(session.end, now: now))\(reason)")
            }
            for grant in status.grants {
                let task = grant.task.map { " · task “\($0)”" } ?? ""
                print("Open now: \(grant.entry) (\(grant.kind)) until \(TimeWords.until(grant.end, now: now))\(task)")
            }
            // SPEC §9a: a member sees the answer to their requests for time.
            for r in status.requests ?? [] {
                let asked = "Request \(r.id) for \(TimeWords.span(seconds: r.seconds)) (“\(r.note)”)"
                switch r.status {
                case .pending: print("\(asked) waits for an owner's answer.")
                case .approved, .declined:
                    let note = r.answerNote.map { ": “\($0)”" } ?? "."
                    print("\(asked) was \(r.status.rawValue)\(r.answeredBy.map { " by \($0)" } ?? "")\(note)")
                }
            }
        }
    }
}

/// One entry's line in `status`, `block` and `unblock`.
enum EntryWords {
    /// Entries that read the same (a category blocked by one schedule) share one line, so a
    /// status of twenty services stays a few lines long.
    static func groupedLines(_ entries: [EntryReport], now: Instant) -> [String] {
        var order: [String] = []
        var names: [String: [String]] = [:]
        for entry in entries {
            let key = details(entry, now: now).joined(separator: " · ")
            if names[key] == nil { order.append(key) }
            names[key, default: []].append(entry.id)
        }
        return order.map { key in
            let ids = names[key] ?? []
            return ([Terminal.bold(shortList(ids))] + [key]).joined(separator: " · ")
        }
    }

    static func line(_ entry: EntryReport, now: Instant) -> String {
        ([Terminal.bold(entry.id)] + details(entry, now: now)).joined(separator: " · ")
    }

    static func details(_ entry: EntryReport, now: Instant) -> [String] {
        var parts = [state(entry.state)]
        if let change = entry.nextChangeWords(now: now) { parts.append(change) }
        if let locked = entry.lockedUntil { parts.append("locked until \(TimeWords.until(locked, now: now))") }
        for reason in entry.reasons where !reason.isEmpty { parts.append("“\(reason)”") }
        return parts
    }

    static func state(_ state: EntryStateName) -> String {
        switch state {
        case .blocked, .curfew: Terminal.green(state.wireName)
        case .open: Terminal.yellow(state.wireName)
        case .none, .scheduled, .unknown: state.wireName
        }
    }
}

/// "instagram, tiktok", or "9gag, bereal, bluesky, douyin and 17 more" for a long list.
func shortList(_ names: [String], keep: Int = 4) -> String {
    guard names.count > keep + 1 else { return names.joined(separator: ", ") }
    return names.prefix(keep).joined(separator: ", ") + " and \(names.count - keep) more"
}

/// "1 peek", "0 tokens".
enum Plural {
    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}

/// `scrolloff services [--category C]`: the curated services and their state (SPEC §1, §13).
struct Services: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the services you can block by name, and their state.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Only this category (social, video, news, …).")
    var category: String?

    func run() throws {
        let answer = try options.call(ControlEndpoints.services, query: [(ControlQuery.category, category)])
        options.emit(answer) {
            let width = answer.services.map(\.id.count).max() ?? 0
            for s in answer.services {
                let pad = String(repeating: " ", count: max(0, width - s.id.count))
                let state = s.state == .none ? "" : " · " + EntryWords.state(s.state)
                print("\(s.id)\(pad)  \(s.displayName)\(state)")
            }
        }
    }
}
