import ArgumentParser
import ControlAPI

/// `scrolloff token ENTRY [--task TEXT]`: an emergency token, 10 minutes (SPEC §5 step 4).
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Use an emergency token: opens an entry for 10 minutes, 5 per month.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to open, such as instagram.")
    var entry: String

    @Option(name: .long, help: "What you need it for; shown while it runs.")
    var task: String?

    @Flag(name: .long, help: "Do not offer the short exercise first.")
    var skipExercise = false

    func run() throws {
        try BypassFlow(kind: .token, entry: entry, task: task, skipExercise: skipExercise, options: options).run()
    }
}
