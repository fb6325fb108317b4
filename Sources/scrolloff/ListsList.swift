import ArgumentParser
import ControlAPI
import ControlTransport

/// `scrolloff lists list`: every downloaded list, its size and freshness, and why a refresh failed.
struct ListsList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Show the downloaded lists: names, freshness, and why a refresh failed."
    )

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let client = options.client()
        let answer = try options.talk { () throws(ControlClientError) in
            try client.call(ControlEndpoints.lists)
        }
        if options.json {
            Terminal.printJSON(answer)
            return
        }
        guard !answer.lists.isEmpty else {
            print("No downloaded lists yet. Add one with `scrolloff lists add URL`.")
            return
        }
        let total = answer.lists.reduce(0) { $0 + ($1.servingCopy ? $1.entryCount ?? 0 : 0) }
        print("\(answer.lists.count) \(answer.lists.count == 1 ? "list" : "lists"), \(Format.names(total)) in force")
        for list in answer.lists {
            for line in ListDescription.lines(for: list, now: answer.now) { print(line) }
        }
    }
}
