import ArgumentParser
import Foundation
import Helper
import Logging
import scrolloff

/// `scrolloff-dns`: the root helper. It runs in the foreground, as systemd expects (SPEC §13).
@main
struct ScrollOffDNS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrolloff-dns",
        abstract: "Scroll Off's helper: a DNS sinkhole that follows your schedules, credits and peeks.",
        subcommands: [Start.self, CheckConfig.self, ConfigCommand.self, Reset.self, Hosts.self, Web.self, Clock.self, StoreCommand.self]
    )

    static func main() async {
        // Installed, `scrolloff` is a link to this program (one copy of the statically linked Swift
        // runtime for both commands); under that name it is the CLI, before the helper sets anything up.
        if ScrollOffCLI.isCLI(programPath: CommandLine.arguments.first) { ScrollOffCLI.main() }
        // glibc's mmap threshold fixed before any thread allocates (AllocatorTuning: the dynamic one
        // let multi-MiB blocks into an arena, where they stepped RSS up by ~12 MiB, in the soak of bench/soak.sh).
        AllocatorTuning.apply(environment: ProcessInfo.processInfo.environment)
        // One line per event on stderr, with journald's priority prefixes when stderr is the
        // journal; stdout is kept for the `listening …` lines scripts read.
        LoggingSystem.bootstrap(StderrLogHandler.bootstrap(environment: ProcessInfo.processInfo.environment))
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
