import ArgumentParser
import ControlAPI

/// `scrolloff stop [ENTRY]`: end the running spend; nothing more is deducted (SPEC §4). Peeks and
/// tokens are not spends: they run to their end (the helper refuses with when that is).
struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop spending: close what `use` opened.",
        discussion: "Only spends stop early. A peek or token runs to its end, and `stop` says when that is.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Which entry (default: every running spend).")
    var entry: String?

    func run() throws {
        let answer = try options.call(ControlEndpoints.stop, GrantRequest(entry: entry))
        options.emit(answer) {
            // The helper's sentence says what stopped, for how long, and what runs on.
            print(answer.message)
            print("Balance \(Terminal.bold(TimeWords.balance(seconds: answer.balanceSeconds))).")
        }
    }
}
