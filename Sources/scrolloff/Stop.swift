import ArgumentParser
import ControlAPI

/// `scrolloff stop [ENTRY]`: end the running spend; nothing more is deducted (SPEC §4).
struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop spending: close what `use` opened.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Which entry (default: every running spend).")
    var entry: String?

    func run() throws {
        let answer = try options.send(StopResult.self, "POST", "/v1/stop", GrantRequest(entry: entry))
        options.emit(answer) {
            let names = answer.stopped.map(\.entry).joined(separator: ", ")
            print("Stopped\(names.isEmpty ? "" : " " + names). Balance \(Terminal.bold(TimeWords.balance(seconds: answer.balanceSeconds))).")
        }
    }
}
