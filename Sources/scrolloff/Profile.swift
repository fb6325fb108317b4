import ArgumentParser
import ControlAPI

/// Profiles: rules and wallets per group of devices (SPEC §9).
enum ProfileVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Profile.self] }
}

/// `scrolloff profile`: rules per group of clients (SPEC §9).
struct Profile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Profiles: separate rules and wallets for groups of devices on the network.",
        subcommands: [ProfileAdd.self, ProfileList.self, ProfileRemove.self]
    )
}

/// `scrolloff profile add NAME --clients CIDR,...`.
struct ProfileAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a profile for the clients in these networks (or change its clients)."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The profile's name: letters, digits, - and _.")
    var name: String

    @Option(name: .long, help: ArgumentHelp("Client addresses or networks.", valueName: "CIDR,..."))
    var clients: String

    func validate() throws {
        if splitList(clients).isEmpty { throw ValidationError("Name the clients, such as --clients 192.168.1.20/32,fd00::/64.") }
    }

    func run() throws {
        let answer = try options.call(ControlEndpoints.addProfile, ProfileRequest(name: name, clients: splitList(clients)))
        options.emit(answer) {
            print("Profile \(Terminal.bold(name)) covers \(splitList(clients).joined(separator: ", ")). "
                + "It has its own rules and wallet; use --profile \(name) to act on it.")
        }
    }
}

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
