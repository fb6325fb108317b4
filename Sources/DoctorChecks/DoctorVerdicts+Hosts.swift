import ControlAPI
import Foundation

extension DoctorVerdicts {
    /// The hosts-file section: kept up to date, or why not and what to do.
    public static func hosts(_ facts: DoctorHostsFacts, now: Date) -> DoctorCheck {
        if let since = facts.failingSince {
            let seconds = max(0, Int(now.timeIntervalSince(since)))
            let error = facts.error ?? "unknown error"
            let fix: String
            if let known = facts.fix {
                fix = known
            } else if error.contains("is damaged") {
                fix = "Edit \(facts.path) so that one '# BEGIN scrolloff' line is followed by one '# END scrolloff' line "
                    + "(or delete both markers and the lines between); the helper takes over again within seconds."
            } else if error.contains("read-only") || error.contains("permission denied") {
                fix = "Hosts mode needs \(facts.path)'s folder writable: add ReadWritePaths=/etc to the unit "
                    + "(`sudo systemctl edit scrolloff-dns`), then restart it."
            } else {
                fix = "Read the helper's log: `journalctl -u scrolloff-dns -n 50`; it retries on its own."
            }
            return .fail("hosts", "cannot update \(facts.path) for \(seconds) s (\(facts.attempts) attempts): \(error)", fix: fix)
        }
        guard let names = facts.names else {
            return .fail("hosts", "\(facts.path) not checked yet", fix: "Wait a second and run `scrolloff doctor` again.")
        }
        if !facts.userLines.isEmpty {
            let shown = facts.userLines.prefix(5).map { "line \($0.number) (`\($0.text)`)" }.joined(separator: ", ")
            let more = facts.userLines.count > 5 ? " and \(facts.userLines.count - 5) more" : ""
            let blocked = Array(Set(facts.userLines.flatMap(\.names))).sorted().prefix(3).joined(separator: ", ")
            let lineWord = facts.userLines.count == 1 ? "line" : "lines"
            return .fail("hosts", "\(facts.userLines.count) \(lineWord) of your own in \(facts.path) give a blocked name (\(blocked)) a real address: "
                + "\(shown)\(more). glibc answers those as well as the block (`multi on` in /etc/host.conf) and apps connect to them",
                fix: "Delete the \(lineWord) or put `#` in front while you want the block: Scroll Off never edits a line outside its section.")
        }
        var detail = names == 0
            ? "\(facts.path) is up to date: nothing blocked now, so no scrolloff section"
            : "\(facts.path) is up to date: \(names) \(names == 1 ? "name" : "names") in the scrolloff section"
        if facts.restoredEdits > 0, let last = facts.lastRestored {
            detail += "; \(facts.restoredEdits) hand \(facts.restoredEdits == 1 ? "edit" : "edits") of the section put back since the helper started, "
                + "latest at \(ControlJSON.wireText(last)) (`scrolloff events`)"
        }
        return .pass("hosts", detail)
    }

    /// SPEC §2, §10: a strict curfew blocks every name but the always-allowed ones in DNS; a hosts
    /// file can only list names, so in `--mode hosts` everything no list names stays open. Said as a
    /// warning (nothing is broken; it is a limit of the mode), nil when it does not apply.
    public static func hostsStrictCurfew(_ facts: DoctorHostsFacts) -> DoctorCheck? {
        guard facts.strictCurfew, !facts.dnsToo else { return nil }
        let now = facts.strictCurfewInForce
            ? "It is in force now: the section lists every name of every list (\(facts.names ?? 0) names)"
            : "While it runs, the section lists every name of every list"
        return .warn("strict_curfew", "a strict curfew blocks every name in DNS, but a hosts file has no wildcard. "
            + "\(now); sites no list names stay open",
            fix: "For the whole curfew run the sinkhole too: `scrolloff-dns start --mode both` and point this machine's resolver at it (README: Hosts mode).")
    }
}
