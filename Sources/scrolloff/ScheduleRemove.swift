import ArgumentParser
import ControlAPI

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
