import ArgumentParser
import ControlAPI
import ControlTransport

/// `scrolloff lists add URL [--name NAME]`: add a list and download it once.
struct ListsAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a block list from an http://, https:// or file:// URL and download it now."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Where the list lives, e.g. https://example.org/hosts.txt.")
    var url: String

    @Option(name: .long, help: "A short name for the list (default: from the URL's host).")
    var name: String?

    func validate() throws {
        let lower = url.lowercased()
        guard ["http://", "https://", "file://"].contains(where: lower.hasPrefix) else {
            throw ValidationError("'\(url)' is not an http://, https:// or file:// URL.")
        }
    }

    func run() throws {
        let client = options.client(timeoutSeconds: Lists.downloadTimeoutSeconds)
        let answer = try options.talk { () throws(ControlClientError) in
            try client.call(ControlEndpoints.addList, AddListRequest(url: url, name: name))
        }
        if options.json {
            Terminal.printJSON(answer)
            return
        }
        let list = answer.result.list
        print("Added \(Terminal.bold(list.name)): \(Format.names(list.entryCount ?? 0)). It refreshes on its own; "
            + "`scrolloff lists update \(list.name)` refreshes it now.")
        if let bad = list.badLineCount, bad > 0 {
            let example = list.badLines.first.map { " (first: line \($0.lineNumber): \($0.reason))" } ?? ""
            print("\(Format.count(bad)) \(bad == 1 ? "line was" : "lines were") skipped\(example).")
        }
    }
}
