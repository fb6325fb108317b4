import ArgumentParser
import ControlAPI

/// `scrolloff plan archive ID`: hidden, never deleted (SPEC §12).
struct PlanArchive: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "archive", abstract: "Archive a plan; it is no longer shown.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The plan's id, as `scrolloff plan list` shows it.")
    var id: Int64

    func run() throws {
        let answer = try options.call(ControlEndpoints.archivePlan, parameter: "\(id)")
        options.emit(answer) { print(answer.message) }
    }
}
