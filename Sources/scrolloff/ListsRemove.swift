import ArgumentParser
import ControlAPI
import ControlTransport

/// `scrolloff lists rm NAME`: stop using a list and delete its copy.
struct ListsRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove a downloaded list; its names stop being blocked."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The list's name, as `scrolloff lists list` shows it.")
    var name: String

    func run() throws {
        let client = options.client()
        let answer = try options.talk { () throws(ControlClientError) in
            try client.call(ControlEndpoints.removeList, parameter: name)
        }
        if options.json {
            Terminal.printJSON(answer)
        } else {
            print("Removed list \(Terminal.bold(answer.removed)).")
        }
    }
}
