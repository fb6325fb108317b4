import ArgumentParser
import ControlAPI

/// `scrolloff ask DURATION --note TEXT`: a member asks the profile's owners for time.
struct Ask: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask the profile's owners for more time; they answer with `scrolloff requests`."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "How much: 15m, 1h.")
    var duration: DurationArgument

    @Option(name: .long, help: "What it is for, in a few words.")
    var note: String

    func validate() throws {
        if note.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Say what it is for with --note, such as --note \"homework research\".") }
    }

    func run() throws {
        let answer = try options.call(ControlEndpoints.askTime, TimeRequestBody(seconds: try RequestedSeconds(duration.seconds, field: "the time asked for"), note: note))
        options.emit(answer) {
            print("Asked for \(TimeWords.span(seconds: answer.seconds)) (request \(answer.id)). "
                + "`scrolloff status` shows the answer once an owner gives it.")
        }
    }
}
