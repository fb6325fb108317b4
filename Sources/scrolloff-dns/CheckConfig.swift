import ArgumentParser
import Config
import Foundation
import Helper
import ServiceKit

/// `scrolloff-dns check-config [--config FILE]` (SPEC §13): reads and checks the configuration
/// file without starting anything, so a change can be checked before `systemctl reload`.
/// Exit 0 with a short summary when the file is good; exit 1 with every problem otherwise.
/// Runs the same checks as start and reload (`ConfigurationReloader.validate`), with the same words.
struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration file without starting the helper; every problem is listed with its key and line."
    )

    @Option(name: .customLong("config"), help: "The file to check (default /etc/scrolloff/scrolloff.toml as root).")
    var configFile: String?

    /// Where the default upstreams come from when the file names none (tests point it elsewhere).
    @Option(name: .customLong("resolv-conf"), help: .hidden)
    var resolvConf = ConfigurationFile.resolvConfPath

    func run() throws {
        let base = RuntimePaths.current()
        let path = configFile ?? base.configFile
        let configuration: HelperConfiguration
        do {
            configuration = try ConfigurationFile.load(path: configFile, base: base, resolvConf: resolvConf)
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(1)
        }
        // The checks start and reload make on top of the file's own (an upstream to ask, …), so a
        // file passed here is not refused by `systemctl reload`. Only what needs the running rules
        // (a list source's host against the entries in force, SPEC §1) is left to the helper.
        do { try ConfigurationReloader.validate(configuration) } catch {
            FileHandle.standardError.write(Data("\(path): \(error.description)\n".utf8))
            throw ExitCode(1)
        }
        let exists = FileManager.default.fileExists(atPath: path)
        print(exists ? "\(path): the configuration is valid." : "\(path) does not exist: the embedded defaults apply.")
        for line in ConfigurationSummary.lines(configuration) { print("  " + line) }
    }
}
