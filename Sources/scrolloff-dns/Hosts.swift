import ArgumentParser
import Config
import Foundation
import Helper
import HostsFile

/// `scrolloff-dns hosts …`: the managed section of the hosts file (SPEC §10).
struct Hosts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The scrolloff section of the hosts file (hosts mode).",
        subcommands: [Remove.self]
    )

    /// `scrolloff-dns hosts remove`: takes the section out and leaves every other byte as it was.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the scrolloff section from the hosts file, leaving the rest exactly as it was."
        )

        @Option(name: .customLong("hosts-file"), help: "The hosts file (default: the configuration's hosts_file, /etc/hosts).")
        var hostsFile: String?

        @Option(name: .customLong("config"), help: "Configuration file naming the hosts file (default /etc/scrolloff/scrolloff.toml as root).")
        var configFile: String?

        @Option(name: .customLong("control-socket"), help: "The helper's control socket, to warn when it is still running.")
        var controlSocket: String?

        func validate() throws {
            if let hostsFile, !hostsFile.hasPrefix("/") {
                throw ValidationError("--hosts-file must be an absolute path, such as /etc/hosts")
            }
        }

        func run() throws {
            var overrides = ConfigurationOverrides()
            overrides.hostsFile = hostsFile
            overrides.controlSocket = controlSocket
            let configuration = try MaintenanceCommand.configuration(file: configFile, overrides: overrides, flagHint: "name the hosts file with --hosts-file")
            let writer = HostsFileWriter(path: configuration.hostsFile)
            do {
                switch try writer.removeSection() {
                case .unchanged: print("\(writer.path) has no scrolloff section: nothing to remove.")
                case .written: print("Removed the scrolloff section from \(writer.path); every other line is as it was.")
                // Only the helper waits for other writers; this command was asked for now.
                case .writersOpen: break
                }
            } catch {
                throw MaintenanceFailure(error.description)
            }
            if MaintenanceCommand.helperAnswers(socket: configuration.paths.controlSocket) {
                print("The helper is still running; in hosts mode it writes the section back. Stop it with `sudo systemctl stop scrolloff-dns` or start it with --mode dns.")
            }
        }
    }
}
