import ArgumentParser
import ControlAPI

/// `scrolloff use ENTRY [--for DURATION] [--task TEXT]`: spend credit to open a blocked entry (SPEC §4).
struct Use: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Spend credit to open a blocked entry, paid per second until you stop.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to open, such as instagram.")
    var entry: String

    @Option(name: .customLong("for"), help: "At most this long: 45m, 2h, 1h30m, 90s.")
    var length: DurationArgument?

    @Option(name: .long, help: "What you are opening it for; shown while it runs.")
    var task: String?

    func run() throws {
        let planShown = try BypassFlow.showPlanFirst(options, entry: entry) != nil
        let answer = try options.call(ControlEndpoints.use,
                                      GrantRequest(entry: entry, forSeconds: try length.map { try SpendLimitSeconds($0.seconds, field: "--for") }, task: task))
        options.emit(answer) { GrantWords.print(answer, planShown: planShown) }
    }
}
