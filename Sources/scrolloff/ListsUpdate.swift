import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation

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
