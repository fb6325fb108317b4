import ArgumentParser
import Foundation
import Helper

/// `scrolloff-dns check-config [--config FILE]` (SPEC §13): reads and checks the configuration
/// file without starting anything, so a change can be checked before `systemctl reload`.
/// Exit 0 with a short summary when the file is good; exit 1 with every problem otherwise.
struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration file without starting the helper; every problem is listed with its key and line."
    )

    @Option(name: .customLong("config"), help: "The file to check (default /etc/scrolloff/scrolloff.toml as root).")
    var configFile: String?

    func run() throws {
        let base = RuntimePaths.current()
        let path = configFile ?? base.configFile
        do {
            let configuration = try ConfigurationFile.load(path: configFile, base: base)
            let exists = FileManager.default.fileExists(atPath: path)
            print(exists ? "\(path): the configuration is valid." : "\(path) does not exist: the embedded defaults apply.")
            for line in ConfigurationSummary.lines(configuration) { print("  " + line) }
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(1)
        }
    }
}
