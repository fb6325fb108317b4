import ArgumentParser
import Logging

/// `scrolloff-dns`: the root helper. It runs in the foreground, as systemd expects (SPEC §13).
@main
struct ScrollOffDNS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrolloff-dns",
        abstract: "Scroll Off's helper: a DNS sinkhole that follows your schedules, credits and peeks.",
        subcommands: [Start.self, CheckConfig.self, Reset.self]
    )

    static func main() async {
        // One line per event on stderr; stdout is kept for the `listening …` lines scripts read.
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
