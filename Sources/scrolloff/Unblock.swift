import ArgumentParser
import ControlAPI

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
