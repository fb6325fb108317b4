import ArgumentParser
import ControlAPI

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
