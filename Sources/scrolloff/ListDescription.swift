import ControlAPI
import Foundation
import ScrollOffCore

/// Human lines for one list, numbers first: "ads: 12,408 names, refreshed 3 min ago".
enum ListDescription {
    static func lines(for list: ListInfo, now: Date) -> [String] {
        var first = "\(Terminal.bold(list.name)): "
        if let entries = list.entryCount, list.servingCopy {
            first += Format.names(entries)
            if let changed = list.lastSuccess { first += ", refreshed \(Format.ago(changed, now: now))" }
        } else {
            first += "no copy yet"
        }
        var lines = [first, "  " + Terminal.dim(list.url)]
        if let file = list.definedIn {
            lines.append("  from \(file): change or remove it there, then `sudo systemctl reload scrolloff-dns`")
        }
        switch list.state {
        case ListState.failing:
            let when = list.lastAttempt.map { " \(Format.ago($0, now: now))" } ?? ""
            let keep = list.servingCopy ? "; blocking goes on with the last good copy" : ""
            lines.append("  " + Terminal.yellow("The last refresh failed\(when)\(keep).") + " Why: \(list.lastError ?? "unknown")")
        case ListState.stale:
            lines.append("  " + Terminal.yellow("Not refreshed for a while") + "; the last good copy stays in force."
                + (list.lastError.map { " Why: \($0)" } ?? ""))
        default:
            break
        }
        if let held = list.held {
            lines.append("  " + Self.heldWords(held, now: now))
        }
        if let bad = list.badLineCount, bad > 0 {
            let example = list.badLines.first.map { " (first: line \($0.lineNumber): \($0.reason))" } ?? ""
            lines.append("  \(Format.count(bad)) \(bad == 1 ? "line was" : "lines were") skipped\(example)")
        }
        if let next = list.nextRefresh {
            lines.append("  next refresh \(Format.until(next, now: now))")
        }
        return lines
    }

    /// "4 names dropped by a refresh stay blocked until 14:00 — 1 h 40 min: instagram is in cooldown …"
    static func heldWords(_ held: HeldNamesInfo, now: Date) -> String {
        let until = held.until.map { "until \(TimeWords.until(Instant(date: $0), now: Instant(date: now)))" } ?? "until the rule allows it"
        return Terminal.yellow("\(Format.names(held.count)) dropped by a refresh stay blocked \(until)")
            + ", while a rule holds this list: \(held.reason)"
    }

    /// One line for a refresh outcome.
    static func outcome(_ result: RefreshResult, now: Date) -> String {
        let names = result.list.entryCount.map(Format.names) ?? "no names"
        switch result.outcome {
        case RefreshOutcome.updated:
            let held = result.list.held.map { "; " + heldWords($0, now: now) } ?? ""
            return "\(Terminal.bold(result.name)): " + Terminal.green("updated") + ", \(names)\(held)"
        case RefreshOutcome.unchanged:
            return "\(Terminal.bold(result.name)): unchanged, \(names)"
        default:
            let keep = result.list.servingCopy ? " Blocking goes on with the last good copy (\(names))." : ""
            return "\(Terminal.bold(result.name)): " + Terminal.yellow("not updated.") + keep
                + " Why: \(result.error?.message ?? "unknown")"
        }
    }
}
