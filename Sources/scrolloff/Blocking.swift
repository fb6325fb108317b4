import ArgumentParser
import ControlAPI
import ScrollOffCore

/// Blocks: around the clock, on a schedule, and focus sessions (SPEC §2, §3).
enum BlockingVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Block.self, Unblock.self, Schedule.self, Focus.self] }
}

/// `scrolloff block ENTRY... [--reason TEXT]`: block around the clock, with a cooldown (SPEC §2, §3).
struct Block: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Block services, categories or domains around the clock.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Service ids (instagram), categories (social) or domains (news.example.com).")
    var entries: [String]

    @Option(name: .long, help: "Why, in your words; shown back to you if you try to undo it.")
    var reason: String?

    func validate() throws {
        if entries.isEmpty { throw ValidationError("Name at least one service, category or domain, such as `scrolloff block instagram`.") }
    }

    func run() throws {
        let answer = try options.call(ControlEndpoints.block, EntriesRequest(entries: entries, reason: reason))
        options.emit(answer) {
            print(answer.message)
            let now = answer.now ?? TimeWords.now()
            for entry in answer.entries { print(EntryWords.line(entry, now: now)) }
        }
    }
}

/// `scrolloff unblock ENTRY...`: refused while the cooldown runs (SPEC §3).
struct Unblock: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove an around-the-clock block once its cooldown is over.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to unblock, as `scrolloff status` names it.")
    var entries: [String]

    func validate() throws {
        if entries.isEmpty { throw ValidationError("Name what to unblock, such as `scrolloff unblock instagram`.") }
    }

    func run() throws {
        let answer = try options.call(ControlEndpoints.unblock, EntriesRequest(entries: entries))
        options.emit(answer) { print(answer.message) }
    }
}

/// `scrolloff schedule`: recurring block windows and curfews (SPEC §2).
struct Schedule: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, show and remove recurring block windows and curfews.",
        subcommands: [ScheduleAdd.self, ScheduleList.self, ScheduleRemove.self]
    )
}

/// `scrolloff schedule add NAME --from HH:MM --to HH:MM [--days …] [--curfew [--strict]] --entries A,B [--reason TEXT]`.
struct ScheduleAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a schedule, or change one (loosening waits for its cooldown; a curfew is locked while it runs)."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "A name for the schedule, such as evenings.")
    var name: String

    @Option(name: .long, help: ArgumentHelp("When it starts, local time: 21:00, 9pm, 9:30 pm.", valueName: "TIME"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("When it ends (07:00, 7am); an end before the start crosses midnight.", valueName: "TIME"))
    var to: String

    @Option(name: .long, help: "daily, weekdays, weekends or mon,tue,…")
    var days = "daily"

    @Flag(name: .long, help: "A curfew: nothing opens it, not even peeks or tokens.")
    var curfew = false

    @Flag(name: .long, help: "With --curfew: block every name but the allow list.")
    var strict = false

    @Option(name: .long, help: ArgumentHelp("What it blocks: services, categories or domains.", valueName: "A,B"))
    var entries: String?

    @Option(name: .long, help: "Why, in your words.")
    var reason: String?

    /// `--from`/`--to` as `HH:MM`: read here, in the forms `LocalTime.parse` knows, so a typo is a
    /// usage error with the accepted forms before anything is sent, and the helper gets one form.
    static func clock(_ text: String, _ option: String) throws -> String {
        do { return try LocalTime.parse(text).description } catch { throw ValidationError("\(option): \(error.message)") }
    }

    func validate() throws {
        _ = try Self.clock(from, "--from")
        _ = try Self.clock(to, "--to")
        if strict && !curfew { throw ValidationError("--strict goes with --curfew.") }
        if splitList(entries).isEmpty && !strict { throw ValidationError("Say what the schedule blocks with --entries instagram,tiktok.") }
    }

    func run() throws {
        let request = ScheduleRequest(name: name, from: try Self.clock(from, "--from"), to: try Self.clock(to, "--to"),
                                      days: days, curfew: curfew, strict: strict,
                                      entries: splitList(entries), reason: reason)
        let answer = try options.call(ControlEndpoints.addSchedule, request)
        options.emit(answer) {
            print("Saved \(Terminal.bold(answer.name)): \(ScheduleWords.line(answer))")
            if let locked = answer.lockedUntil {
                print("It can be loosened again from \(TimeWords.until(locked, now: answer.now ?? TimeWords.now())); strengthening is always possible.")
            }
        }
    }
}

enum ScheduleWords {
    /// "curfew 22:00–07:00 daily · instagram, tiktok".
    static func line(_ s: ScheduleReport) -> String {
        let what = s.kind == "strict-curfew" ? "everything but the allow list" : shortList(s.entries)
        return "\(s.kind) \(s.from)–\(s.to) \(s.daysText) · \(what)"
    }
}

/// `scrolloff schedule list`.
struct ScheduleList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Show your schedules.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.schedules)
        options.emit(answer) {
            guard !answer.schedules.isEmpty else {
                print("No schedules yet. `scrolloff schedule add evenings --from 21:00 --to 07:00 --entries social` adds one.")
                return
            }
            let now = answer.now ?? TimeWords.now()
            for s in answer.schedules {
                let lock = s.lockedUntil.map { " · locked until \(TimeWords.until($0, now: now))" } ?? ""
                let reason = s.reason.map { " · “\($0)”" } ?? ""
                print("\(Terminal.bold(s.name)): \(ScheduleWords.line(s))\(lock)\(reason)")
            }
        }
    }
}

/// `scrolloff schedule rm NAME`: refused inside a curfew's edit lock and the cooldown (SPEC §2, §3).
struct ScheduleRemove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a schedule once it may be loosened.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The schedule's name, as `scrolloff schedule list` shows it.")
    var name: String

    func run() throws {
        let answer = try options.call(ControlEndpoints.removeSchedule, parameter: name)
        options.emit(answer) { print(answer.message) }
    }
}

/// `scrolloff focus DURATION [--entries A,B]`: a one-off block from now (SPEC §2).
struct Focus: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a focus session: block now for a while; it ends by itself.",
        discussion: """
            A focus session blocks its entries from now until it ends, and cannot be ended early: \
            nobody can unblock what it names until then, you included. It blocks as any block does, \
            so peeks, your credit (`scrolloff use`) and tokens still open an entry for a while, by the \
            same rules and costs.
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("How long: 45m, 2h, 1h30, 90 minutes.", valueName: "duration"), transform: DurationArgument.reading)
    var duration: DurationArgument

    @Option(name: .long, help: ArgumentHelp("What to block (default: everything you have blocked or scheduled).", valueName: "A,B"))
    var entries: String?

    @Option(name: .long, help: "What you are focusing on.")
    var reason: String?

    func run() throws {
        let answer = try options.call(ControlEndpoints.focus,
                                      FocusRequest(seconds: try FocusSeconds(duration.seconds, field: "the focus length"), entries: splitList(entries), reason: reason))
        options.emit(answer) {
            print("Focus until \(TimeWords.until(answer.end, now: answer.start)): \(shortList(answer.entries)) "
                + "\(answer.entries.count == 1 ? "stays" : "stay") blocked. Good luck!")
        }
    }
}
