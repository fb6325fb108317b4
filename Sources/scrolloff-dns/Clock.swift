import ArgumentParser
import Config
import Foundation
import Helper

/// `scrolloff-dns clock …`: the helper's trusted clock (SPEC §11).
struct Clock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The helper's trusted clock.",
        subcommands: [Reset.self]
    )

    /// `scrolloff-dns clock reset` (SPEC §11 clock recovery).
    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the trusted clock to the system clock (root only; stop the helper first).",
            discussion: """
                The helper's trusted clock never runs backwards by itself, so a start with the system clock \
                far ahead keeps it ahead. NTP-synchronised time brings it back on its own; without NTP, root \
                runs this once the system clock is right. Rules keep their times of day, and a tamper event \
                records the reset.
                """
        )

        @Option(name: .customLong("config"), help: "Configuration file naming the state folder (default /etc/scrolloff/scrolloff.toml as root).")
        var configFile: String?

        @Option(name: .customLong("state-dir"), help: "The helper's state folder (default: the configuration's).")
        var stateDirectory: String?

        func run() throws {
            var overrides = ConfigurationOverrides()
            overrides.stateDirectory = stateDirectory
            let configuration = try MaintenanceCommand.configuration(file: configFile, overrides: overrides, flagHint: "name the folder with --state-dir")
            let outcome: ClockReset.Outcome
            do { outcome = try ClockReset.run(stateDirectory: configuration.paths.stateDirectory) } catch {
                throw MaintenanceFailure(error.description)
            }
            let moved = outcome.after.millisecondsSince1970 - outcome.before.millisecondsSince1970
            let minutes = abs(moved) / 60_000
            func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
            print("The trusted clock now reads the system clock, \(date(outcome.after.millisecondsSince1970)) "
                  + "(it read \(date(outcome.before.millisecondsSince1970)), "
                  + "\(minutes) min \(moved < 0 ? "ahead" : "behind")). The helper takes it at its next start; "
                  + "a tamper event records the reset.")
        }
    }
}
