import ArgumentParser
import ControlAPI

/// `scrolloff profile list`: names and client networks, the default profile first.
struct ProfileList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Show the profiles and the clients each covers.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.profiles)
        options.emit(answer) {
            for profile in answer.profiles {
                let clients = profile.clients.isEmpty ? "every client no other profile covers" : profile.clients.joined(separator: ", ")
                print("\(Terminal.bold(profile.name)): \(clients)")
            }
            // Which profile wins where clients overlap: nested networks were silent.
            for line in answer.overlaps ?? [] { print("overlap: \(line)") }
        }
    }
}
