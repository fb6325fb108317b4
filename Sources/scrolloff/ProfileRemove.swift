import ArgumentParser
import ControlAPI

/// `scrolloff profile rm NAME` (SPEC §13, root).
struct ProfileRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove a profile with its rules, wallet and history; its devices follow the default profile."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The profile's name.")
    var name: String

    func run() throws {
        let answer = try options.call(ControlEndpoints.removeProfile, parameter: name)
        options.emit(answer) { print(answer.message) }
    }
}
