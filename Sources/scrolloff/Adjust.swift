import ArgumentParser
import ControlAPI

/// `scrolloff adjust [+|-]DURATION [--profile P] --note TEXT` (SPEC §13, owners): grants or takes
/// credit, written as a ledger `adjust` row with the note.
struct Adjust: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Grant (+15m) or take (-10m) credit for a profile you own; the note goes into the ledger."
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Why, in a few words; kept in the ledger.")
    var note: String

    // `-10m` looks like an option to the parser, so the amount is taken from what it does not know.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("How much: +15m grants, -10m takes.", valueName: "[+|-]DURATION"))
    var amount: [String] = []

    /// The signed amount in seconds.
    var seconds: Int64? {
        guard amount.count == 1, let text = amount.first else { return nil }
        var body = Substring(text)
        var sign: Int64 = 1
        if body.first == "+" { body = body.dropFirst() } else if body.first == "-" { sign = -1; body = body.dropFirst() }
        return DurationArgument.parse(String(body)).map { $0 * sign }
    }

    func validate() throws {
        guard seconds != nil else {
            throw ValidationError("Give one amount such as +15m or -10m (got \(amount.isEmpty ? "none" : amount.joined(separator: " "))).")
        }
        if note.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Say why with --note, such as --note \"chores done\".") }
    }

    func run() throws {
        let answer = try options.call(ControlEndpoints.adjust, AdjustRequest(seconds: try AdjustmentSeconds(seconds ?? 0, field: "the adjustment"), note: note))
        options.emit(answer) { print(answer.message) }
    }
}
