import ArgumentParser
import ControlAPI

/// `scrolloff peek ENTRY [--task TEXT]`: a short look (SPEC §5 steps 1–2).
struct Peek: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take a 60-second peek: the first each day is free, then two more cost 60 s of credit each."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to peek at, such as instagram.")
    var entry: String

    @Option(name: .long, help: "What you are peeking for; shown while it runs.")
    var task: String?

    @Flag(name: .long, help: "Do not offer the short exercise first.")
    var skipExercise = false

    func run() throws {
        try BypassFlow(kind: .peek, entry: entry, task: task, skipExercise: skipExercise, options: options).run()
    }
}
