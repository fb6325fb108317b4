import ArgumentParser
import ControlAPI

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
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List requests for time, newest first.")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Every profile you may see, not only --profile's.")
    var all = false

    func run() throws {
        let answer = try options.call(ControlEndpoints.timeRequests, query: [(ControlQuery.all, ControlQuery.flag(all))])
        options.emit(answer) {
            let now = answer.now ?? TimeWords.now()
            if answer.requests.isEmpty { print("No requests for time.") }
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
