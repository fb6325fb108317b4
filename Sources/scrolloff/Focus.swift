import ArgumentParser
import ControlAPI

/// `scrolloff focus DURATION [--entries A,B]`: a one-off block from now (SPEC §2).
struct Focus: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start a focus session: block now for a while; it ends by itself.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "How long: 45m, 2h, 1h30m.")
    var duration: DurationArgument

    @Option(name: .long, help: ArgumentHelp("What to block (default: everything you have blocked or scheduled).", valueName: "A,B"))
    var entries: String?

    @Option(name: .long, help: "What you are focusing on.")
    var reason: String?

    func run() throws {
        let answer = try options.call(ControlEndpoints.focus,
                                      FocusRequest(seconds: try FocusSeconds(duration.seconds, field: "the focus length"), entries: splitList(entries), reason: reason))
        options.emit(answer) {
            print("Focus until \(TimeWords.until(answer.end, now: answer.start)): \(shortList(answer.entries)) stay blocked. Good luck!")
        }
    }
}
