import ArgumentParser
import ControlAPI

/// The household: owners adjust credit, members ask for time and owners answer (SPEC §13).
enum HouseholdVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Adjust.self, Ask.self, Requests.self] }
}

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
            let got = amount.isEmpty ? "none" : amount.joined(separator: " ")
            throw ValidationError("Give one amount such as +15m, -10m or +1h30 (got \(got)): a sign, then \(DurationArgument.acceptedForms).")
        }
        if note.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Say why with --note, such as --note \"chores done\".") }
    }

    func run() throws {
        let answer = try options.call(ControlEndpoints.adjust, AdjustRequest(seconds: try AdjustmentSeconds(seconds ?? 0, field: "the adjustment"), note: note))
        options.emit(answer) { print(answer.message) }
    }
}

/// `scrolloff ask DURATION --note TEXT`: a member asks the profile's owners for time.
struct Ask: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask the profile's owners for more time; they answer with `scrolloff requests`."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("How much: 15m, 1h, 1h30, 20 minutes.", valueName: "duration"), transform: DurationArgument.reading)
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

/// `scrolloff requests [approve|decline ID]` (SPEC §13): members' requests for time, and an
/// owner's answer.
struct Requests: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Requests for time: list them, or approve or decline one (owners).",
        subcommands: [RequestsList.self, RequestsAnswer.Approve.self, RequestsAnswer.Decline.self],
        defaultSubcommand: RequestsList.self
    )
}

/// `scrolloff requests [list] [--all]`.
struct RequestsList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List requests for time, newest first: by default those waiting for your answer in every profile you own, and your own.")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Every request of every profile you may see, answered ones included.")
    var all = false

    func run() throws {
        let answer = try options.call(ControlEndpoints.timeRequests, query: [(ControlQuery.all, ControlQuery.flag(all))])
        options.emit(answer) {
            let now = answer.now ?? TimeWords.now()
            if answer.requests.isEmpty { print("No requests for time.") }
            let waiting = answer.requests.filter { $0.status == .pending }.count
            if waiting > 0 {
                print("\(waiting) \(waiting == 1 ? "request waits" : "requests wait") for your answer: "
                    + "`scrolloff requests approve ID` or `decline ID`.")
            }
            for r in answer.requests {
                var line = "\(r.id)  \(r.profile)  \(TimeWords.span(seconds: r.seconds))  \(r.status.rawValue)  “\(r.note)”  asked \(TimeWords.clock(r.createdAt, now: now))"
                if let at = r.answeredAt { line += ", \(r.status.rawValue) \(TimeWords.clock(at, now: now))\(r.answeredBy.map { " by \($0)" } ?? "")" }
                if let note = r.answerNote { line += ": “\(note)”" }
                print(line)
            }
        }
    }
}

/// `scrolloff requests approve|decline ID [--note TEXT]`.
enum RequestsAnswer {
    static func answer(
        _ options: GlobalOptions, id: Int64, _ endpoint: ControlEndpoint<TimeRequestAnswerBody, TimeRequestAnswerReport>, note: String?
    ) throws {
        let answer = try options.call(endpoint, TimeRequestAnswerBody(note: note), parameter: "\(id)")
        options.emit(answer) { print(answer.message) }
    }

    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "approve", abstract: "Approve a request: its time is added to the profile's credit.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id, as `scrolloff requests` shows it.") var id: Int64
        @Option(name: .long, help: "A word back to the member.") var note: String?
        func run() throws { try RequestsAnswer.answer(options, id: id, ControlEndpoints.approveRequest, note: note) }
    }

    struct Decline: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "decline", abstract: "Decline a request; the member sees the answer.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The request's id, as `scrolloff requests` shows it.") var id: Int64
        @Option(name: .long, help: "A word back to the member.") var note: String?
        func run() throws { try RequestsAnswer.answer(options, id: id, ControlEndpoints.declineRequest, note: note) }
    }
}
