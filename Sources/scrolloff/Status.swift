import ArgumentParser
import ControlAPI
import ScrollOffCore

/// `scrolloff status`: what is blocked, what opens when, and what is left (SPEC §13).
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what is blocked, what opens when, and your balance.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let status = try options.get(StatusReport.self, "/v1/status")
        options.emit(status) {
            let now = status.now
            print("Balance \(Terminal.bold(TimeWords.balance(seconds: status.balanceSeconds))) · "
                + "\(Plural.count(status.peeksLeftToday, "peek")) left today · "
                + "\(Plural.count(status.tokensLeftMonth, "token")) left this month")
            if let until = status.strictCurfewUntil {
                print(Terminal.yellow("Strict curfew: everything but the allow list is blocked until \(TimeWords.until(until, now: now))."))
            }
            guard !status.entries.isEmpty else {
                print("Nothing is blocked yet. `scrolloff block instagram` blocks it and starts earning you credit.")
                return
            }
            for entry in status.entries { print(EntryWords.line(entry, now: now)) }
            for grant in status.grants {
                let task = grant.task.map { " · task “\($0)”" } ?? ""
                print("Open now: \(grant.entry) (\(grant.kind)) until \(TimeWords.until(grant.end, now: now))\(task)")
            }
        }
    }
}

/// One entry's line in `status`, `block` and `unblock`.
enum EntryWords {
    static func line(_ entry: EntryReport, now: Instant) -> String {
        var parts = [Terminal.bold(entry.id), state(entry.state)]
        if let open = entry.openUntil { parts.append("until \(TimeWords.until(open, now: now))") }
        else if let next = entry.nextChange { parts.append("changes at \(TimeWords.until(next, now: now))") }
        if let locked = entry.lockedUntil { parts.append("locked until \(TimeWords.until(locked, now: now))") }
        if let reason = entry.reason, !reason.isEmpty { parts.append("“\(reason)”") }
        return parts.joined(separator: " · ")
    }

    static func state(_ state: String) -> String {
        switch state {
        case "blocked", "curfew": Terminal.green(state)
        case "open": Terminal.yellow(state)
        default: state
        }
    }
}

/// "1 peek", "0 tokens".
enum Plural {
    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
