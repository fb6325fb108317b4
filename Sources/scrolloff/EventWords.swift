import ControlAPI
import ScrollOffCore

/// How `scrolloff events` words each row (SPEC §12): numbers first, what the person did and what
/// held, never blame.
enum EventWords {
    /// "Since Mon 09:00: 3 rule changes; the rules held 14 times (9 peeks, 5 tokens)."
    static func summary(_ events: [EventReport], since: String?) -> String? {
        let changes = events.filter { $0.ruleChange != nil }.count
        let refusals = events.compactMap(\.refusal)
        guard changes > 0 || !refusals.isEmpty else { return nil }
        var parts: [String] = []
        if changes > 0 { parts.append("\(changes) rule change\(changes == 1 ? "" : "s")") }
        if !refusals.isEmpty {
            let total = refusals.reduce(0) { $0 + $1.count + $1.folded }
            var byAction: [String: Int] = [:]
            for r in refusals { byAction[r.action, default: 0] += r.count }
            let detail = byAction.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            parts.append("the rules held \(total) time\(total == 1 ? "" : "s") (\(detail))")
        }
        return "\(since.map { "Since \($0)" } ?? "So far"): " + parts.joined(separator: "; ") + "."
    }

    static func line(_ event: EventReport, now: Instant) -> String {
        let when = TimeWords.clock(event.time, now: now)
        if let r = event.refusal {
            let times = r.count + r.folded > 1 ? " ×\(r.count + r.folded) (last \(TimeWords.clock(r.lastAt, now: now)))" : ""
            let held = r.curfew.map { "the curfew “\($0)”" } ?? r.rule.replacingOccurrences(of: "_", with: " ")
            let until = r.opensAt.map { " until \(TimeWords.clock($0, now: now))" } ?? ""
            let subject = r.subject.map { " \($0)" } ?? ""
            return "\(when)  \(r.action)\(subject) held by \(held)\(until)\(times) — \(r.message)"
        }
        if let c = event.ruleChange {
            return "\(when)  \(c.change)  \(event.message ?? c.rule)"
        }
        let entry = event.entry.map { " \($0)" } ?? ""
        let message = event.message.map { " — \($0)" } ?? ""
        return "\(when)  \(event.kind)\(entry)\(message)"
    }
}
