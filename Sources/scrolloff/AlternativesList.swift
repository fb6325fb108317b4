import ArgumentParser
import ControlAPI

/// `scrolloff alternatives list`, newest first.
struct AlternativesList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Show your alternatives.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.alternatives)
        options.emit(answer) {
            guard !answer.alternatives.isEmpty else {
                print("No alternatives yet. `scrolloff alternatives add text a friend` adds one.")
                return
            }
            for alternative in answer.alternatives { print("• \(alternative.text)") }
        }
    }
}
