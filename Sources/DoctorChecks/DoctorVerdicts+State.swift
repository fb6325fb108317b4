import ControlAPI
import Foundation
import ScrollOffCore

/// The checks of `scrolloff doctor` on the helper's state: lists, clock, database (SPEC §11).
extension DoctorVerdicts {
    // MARK: 6. lists

    /// One check per downloaded list: refreshed within twice its period (`RefreshPlan.isStale`).
    public static func lists(_ lists: [DoctorListFacts], now: Date) -> [DoctorCheck] {
        guard !lists.isEmpty else { return [.pass("lists", "no downloaded lists to keep fresh")] }
        return lists.map { list in
            let name = "list:\(list.name)"
            let fix = "`scrolloff lists update \(list.name)`"
            let every = SpanWords.describe(seconds: list.periodSeconds)
            let why = list.lastError.map { " (last try: \($0))" } ?? ""
            guard let last = list.lastSuccess else {
                return .fail(name, "\(list.name) was never downloaded\(why)", fix: fix)
            }
            let age = Int64(now.timeIntervalSince(last).rounded(.down))
            let ago = age < 60 ? "just now" : SpanWords.describe(seconds: age) + " ago"
            guard age <= list.periodSeconds * 2 else {
                return .fail(name, "\(list.name) was last refreshed \(ago), more than twice its period of \(every)\(why)", fix: fix)
            }
            // Fresh, but its newest copy passed the household's bound: the old one stays, and with
            // it whatever the new copy added, until a list goes or root raises the bound.
            if list.lastErrorCode == "over-bound", let error = list.lastError {
                return .warn(name, "\(list.name) keeps its copy from \(ago): \(error)",
                             fix: "`scrolloff lists rm NAME` of a list you need less, or raise [lists] max_names in the configuration file")
            }
            return .pass(name, "\(list.name) refreshed \(ago) (every \(every))")
        }
    }

    // MARK: 8. clock

    /// SPEC §11. A FAIL while the clocks disagree now (or the system clock was never set); a
    /// tamper event that is over is reported in the detail, since nothing is left to fix.
    public static func clock(_ clock: DoctorClockFacts) -> DoctorCheck {
        let ntp = "Let NTP keep the system clock right: `sudo timedatectl set-ntp true`. Until then every rule keeps the trusted clock."
        if clock.basis == DoctorClockFacts.awaitingWallClock {
            return .fail("clock", "the system clock reads \(ControlJSON.wireText(clock.wall)), before this build was made; rules keep the trusted clock (\(ControlJSON.wireText(clock.trusted))) until it is set", fix: ntp)
        }
        let offset = clock.offsetSeconds
        if abs(offset) > clock.thresholdSeconds {
            let side = offset > 0 ? "ahead of" : "behind"
            // Behind: either the system clock was set back (NTP sets it right) or the trusted clock
            // was started ahead (a wrong real-time clock, a faked start) and, never running back by
            // itself, needs an authority a member cannot use (SPEC §11 clock recovery).
            let fix = offset > 0 ? ntp : "If the system clock is wrong, let NTP set it: `sudo timedatectl set-ntp true`. "
                + "If it is right, the trusted clock is ahead: it follows the system clock back by itself once NTP "
                + "synchronises it (`timedatectl` shows \"System clock synchronized: yes\"); without NTP, root resets it: "
                + "`sudo systemctl stop scrolloff-dns && sudo scrolloff-dns clock reset && sudo systemctl start scrolloff-dns`. "
                + "Until then every rule keeps the trusted clock."
            return .fail("clock", "the system clock is \(SpanWords.describe(seconds: abs(offset))) \(side) the trusted clock (more than \(SpanWords.describe(seconds: clock.thresholdSeconds)))", fix: fix)
        }
        var detail = "the system clock agrees with the trusted clock (\(abs(offset)) s apart)"
        if let latest = clock.recentTamper.last {
            let window = SpanWords.describe(seconds: clock.tamperWindowSeconds)
            detail += "; \(clock.recentTamper.count) clock \(clock.recentTamper.count == 1 ? "change" : "changes") caught in the last \(window), latest at \(ControlJSON.wireText(latest.time)): \(latest.message)"
        }
        return .pass("clock", detail)
    }

    // MARK: 9. database

    /// - Parameter now: the helper's time, to say for how long writes have failed.
    public static func database(_ database: DoctorDatabaseFacts, now: Date = Date()) -> DoctorCheck {
        if let failure = database.writeFailure {
            let seconds = max(0, Int64(now.timeIntervalSince(failure.since)))
            let directory = (database.path as NSString).deletingLastPathComponent
            return .fail("database", "state writes failing for \(SpanWords.describe(seconds: seconds)), \(failure.attempts) "
                + "\(failure.attempts == 1 ? "attempt" : "attempts"): \(failure.error). Rules stay enforced; "
                + "the ledger and events catch up with the exact seconds once writes succeed",
                fix: "Free space where the state lives: `df -h \(directory)`, then remove what fills it.")
        }
        let shared = database.path.hasPrefix("postgresql://")
        guard !database.problems.isEmpty else {
            return .pass("database", shared ? "the household database \(database.path): reachable, schema whole, notifications arriving"
                                            : "PRAGMA quick_check: ok (\(database.path))")
        }
        let path = database.path
        // A shared store's findings are no SQLite page check: each says what to do itself.
        if shared {
            return .fail("database", "the household database \(path): \(database.problems.prefix(3).joined(separator: "; "))",
                         fix: "Do what each finding says; `sudo journalctl -u scrolloff-dns` shows when it began.")
        }
        return .fail("database", "PRAGMA quick_check of \(path) found: \(database.problems.prefix(3).joined(separator: "; "))",
                     fix: "Stop the helper and recover a copy: `sudo systemctl stop scrolloff-dns && sudo sqlite3 \(path) .recover | sudo sqlite3 \(path).recovered`, then move it in place and start the helper.")
    }
}
