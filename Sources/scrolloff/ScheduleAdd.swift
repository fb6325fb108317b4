import ArgumentParser
import ControlAPI

/// `scrolloff schedule add NAME --from HH:MM --to HH:MM [--days …] [--curfew [--strict]] --entries A,B [--reason TEXT]`.
struct ScheduleAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a schedule, or change one (loosening waits for its cooldown; a curfew is locked while it runs)."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "A name for the schedule, such as evenings.")
    var name: String

    @Option(name: .long, help: ArgumentHelp("When it starts, local time.", valueName: "HH:MM"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("When it ends; an end before the start crosses midnight.", valueName: "HH:MM"))
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

    func validate() throws {
        if strict && !curfew { throw ValidationError("--strict goes with --curfew.") }
        if splitList(entries).isEmpty && !strict { throw ValidationError("Say what the schedule blocks with --entries instagram,tiktok.") }
    }

    func run() throws {
        let request = ScheduleRequest(name: name, from: from, to: to, days: days, curfew: curfew, strict: strict,
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
