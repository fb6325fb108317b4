import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation

/// Block lists downloaded from URLs (SPEC §13).
enum ListsVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Lists.self] }
}

/// `scrolloff lists`: block lists downloaded from URLs (SPEC §13).
struct Lists: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, show, refresh and remove block lists downloaded from URLs.",
        subcommands: [ListsAdd.self, ListsList.self, ListsUpdate.self, ListsRemove.self]
    )

    /// Downloads of large lists may take minutes: 10 min per attempt, 3 attempts, waits between.
    static let downloadTimeoutSeconds: Double = 35 * 60
}

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

    @Flag(name: .long, help: "Block the list's names right away, as `scrolloff block NAME` does (a list blocks nothing until then).")
    var block = false

    func validate() throws {
        let lower = url.lowercased()
        guard ["http://", "https://", "file://"].contains(where: lower.hasPrefix) else {
            throw ValidationError("'\(url)' is not an http://, https:// or file:// URL.")
        }
    }

    func run() throws {
        let client = options.client(timeoutSeconds: Lists.downloadTimeoutSeconds)
        let answer = options.json
            ? try options.talk { () throws(ControlClientError) in try client.call(ControlEndpoints.addList, AddListRequest(url: url, name: name)) }
            : try streamWithProgress(client)
        if options.json {
            Terminal.printJSON(answer)
            if block { _ = try options.call(ControlEndpoints.block, EntriesRequest(entries: [answer.result.list.name], reason: nil)) }
            return
        }
        let list = answer.result.list
        print("Added \(Terminal.bold(list.name)): \(Format.names(list.entryCount ?? 0)). It refreshes on its own; "
            + "`scrolloff lists update \(list.name)` refreshes it now.")
        if let bad = list.badLineCount, bad > 0 {
            let example = list.badLines.first.map { " (first: line \($0.lineNumber): \($0.reason))" } ?? ""
            print("\(Format.count(bad)) \(bad == 1 ? "line was" : "lines were") skipped\(example).")
        }
        // A list is an entry like a service (SPEC §13): added, it is known, not yet blocked.
        guard block else {
            print("It blocks nothing until you block it: `scrolloff block \(list.name)` (or add it with --block).")
            return
        }
        let blocked = try options.call(ControlEndpoints.block, EntriesRequest(entries: [list.name], reason: nil))
        print(blocked.message)
    }
}

extension ListsAdd {
    /// Streams the download: a bar on a terminal, and each failed attempt that will be tried
    /// again, with why and when, on standard error.
    private func streamWithProgress(_ client: ControlClient) throws -> AddListResponse {
        var bar = ProgressBar()
        var added: RefreshResult?
        var finishedAt: Date?
        var streamError: ControlError?
        var streamStatus = 500
        let decoder = ControlJSON.decoder()
        let shown = name ?? url
        try options.talk { () throws(ControlClientError) in
            try client.streamLines(ControlEndpoints.addList, AddListRequest(url: url, name: name)) { line in
                guard let event = try? decoder.decode(UpdateStreamLine.self, from: Data(line)) else { return }
                switch event.event {
                case UpdateStreamLine.progress where Terminal.stdoutIsTerminal:
                    bar.show(name: shown, received: event.receivedBytes ?? 0, expected: event.expectedBytes)
                case UpdateStreamLine.retry:
                    bar.clear()
                    Terminal.printError("Attempt \(event.attempt ?? 1) failed: \(event.message ?? "no answer"). "
                        + "Trying again in \(event.retryInSeconds ?? 0) s.")
                case UpdateStreamLine.resultEvent: added = event.result
                case UpdateStreamLine.done: finishedAt = event.now
                case UpdateStreamLine.errorEvent:
                    streamError = event.error
                    streamStatus = event.status ?? 500
                default: break
                }
            }
        }
        bar.clear()
        if let streamError {
            // The exit code an unstreamed answer would give: 2 for a request that cannot work.
            let failure = ControlClientError.refused(status: streamStatus, error: streamError)
            options.report(failure)
            throw ExitCode(failure.exitCode)
        }
        guard let added else {
            Terminal.printError("The helper did not say whether the list was added; `scrolloff lists list` shows it.")
            throw ExitCode(CLIExit.refused)
        }
        return AddListResponse(now: finishedAt ?? Date(), result: added)
    }
}

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

/// `scrolloff lists update [NAME]`: refresh one list or all now, with a progress bar on a terminal.
struct ListsUpdate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Refresh one list, or all of them, now. A failed refresh keeps the last good copy."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The list to refresh (default: all).")
    var name: String?

    func run() throws {
        let client = options.client(timeoutSeconds: Lists.downloadTimeoutSeconds)
        let body = UpdateListsRequest(name: name)
        let results: [RefreshResult]
        let now: Date
        if options.json || !Terminal.stdoutIsTerminal {
            let answer = try options.talk { () throws(ControlClientError) in
                try client.call(ControlEndpoints.updateLists, body)
            }
            if options.json { Terminal.printJSON(answer) }
            results = answer.results
            now = answer.now
        } else {
            (results, now) = try streamWithProgress(client, body: body)
        }
        if !options.json {
            if results.isEmpty { print("No downloaded lists yet. Add one with `scrolloff lists add URL`.") }
            for result in results { print(ListDescription.outcome(result, now: now)) }
        }
        // A list that could not be refreshed is reported as refused (exit 1), so scripts notice.
        if results.contains(where: { $0.outcome == RefreshOutcome.failed }) { throw ExitCode(CLIExit.refused) }
    }

    /// Streams ndjson progress lines and draws one bar per download on the terminal.
    private func streamWithProgress(_ client: ControlClient, body: UpdateListsRequest) throws -> ([RefreshResult], Date) {
        var bar = ProgressBar()
        var results: [RefreshResult] = []
        var finishedAt: Date?
        var streamError: ControlError?
        let decoder = ControlJSON.decoder()
        try options.talk { () throws(ControlClientError) in
            try client.streamLines(ControlEndpoints.updateLists, body) { line in
                guard let event = try? decoder.decode(UpdateStreamLine.self, from: Data(line)) else { return }
                switch event.event {
                case UpdateStreamLine.progress:
                    bar.show(name: event.name ?? "", received: event.receivedBytes ?? 0, expected: event.expectedBytes)
                case UpdateStreamLine.resultEvent:
                    if let result = event.result { results.append(result) }
                case UpdateStreamLine.done:
                    finishedAt = event.now
                case UpdateStreamLine.errorEvent:
                    streamError = event.error
                default:
                    break
                }
            }
        }
        bar.clear()
        if let streamError {
            options.report(.refused(status: 500, error: streamError))
            throw ExitCode(CLIExit.refused)
        }
        return (results, finishedAt ?? results.compactMap(\.list.lastAttempt).max() ?? Date(timeIntervalSince1970: 0))
    }
}

/// `scrolloff lists rm NAME`: stop using a list and delete its copy.
struct ListsRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove a downloaded list; its names stop being blocked."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The list's name, as `scrolloff lists list` shows it.")
    var name: String

    func run() throws {
        let client = options.client()
        let answer = try options.talk { () throws(ControlClientError) in
            try client.call(ControlEndpoints.removeList, parameter: name)
        }
        if options.json {
            Terminal.printJSON(answer)
        } else {
            print("Removed list \(Terminal.bold(answer.removed)).")
        }
    }
}
