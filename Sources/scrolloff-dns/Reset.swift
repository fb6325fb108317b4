import ArgumentParser
import ControlAPI
import Foundation
import Helper
import Store

/// `scrolloff-dns reset --wipe` (SPEC §12, §13): deletes every rule, credit, event, plan and
/// downloaded list, leaving an empty database the next start sets up afresh.
///
/// It refuses while the helper answers on its control socket: the running helper keeps the state in
/// memory and would write it straight back, and pulling the database from under it mid-transaction
/// is exactly the kind of half-done change the store is built to avoid.
struct Reset: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete every rule, credit, event and downloaded list (stop the helper first)."
    )

    @Flag(name: .customLong("wipe"), help: "Required: delete everything in the state folder's database and lists.")
    var wipe = false

    @Flag(name: .customLong("yes"), help: "Do not ask on a terminal.")
    var yes = false

    @Option(name: .customLong("config"), help: "Configuration file naming the state folder (default /etc/scrolloff/scrolloff.toml as root).")
    var configFile: String?

    @Option(name: .customLong("state-dir"), help: "The state folder to wipe (default: the configuration's).")
    var stateDirectory: String?

    @Option(name: .customLong("control-socket"), help: "The helper's control socket, checked to make sure it is stopped.")
    var controlSocket: String?

    func validate() throws {
        guard wipe else {
            throw ValidationError("reset deletes every rule, credit and event; say --wipe to confirm that is what you want")
        }
    }

    func run() throws {
        var overrides = ConfigurationOverrides()
        overrides.stateDirectory = stateDirectory
        overrides.controlSocket = controlSocket
        let configuration: HelperConfiguration
        do {
            configuration = try ConfigurationFile.load(path: configFile, base: RuntimePaths.current(), overrides: overrides)
        } catch {
            throw ResetFailure("\(error.description)\nFix the file, or name the folder with --state-dir.")
        }
        let state = configuration.paths.stateDirectory
        let socket = configuration.paths.controlSocket
        if Self.helperAnswers(socket: socket) {
            throw ResetFailure(
                "the helper is running (it answers on \(socket)); stop it first with `sudo systemctl stop scrolloff-dns` "
                    + "(or Ctrl-C in its terminal), then run reset again.")
        }
        let database = (state as NSString).appendingPathComponent("scrolloff.sqlite")
        guard FileManager.default.fileExists(atPath: database) else {
            print("\(state) holds no database: nothing to wipe.")
            return
        }
        if !yes, isatty(0) == 1, isatty(1) == 1 {
            print("This deletes every block, schedule, credit, event and plan in \(state). Type wipe to go on: ", terminator: "")
            guard readLine()?.trimmingCharacters(in: .whitespaces) == "wipe" else {
                print("Nothing was deleted.")
                return
            }
        }
        do {
            try Store(directory: state).wipe()
        } catch {
            throw ResetFailure("\(error)")
        }
        let lists = (state as NSString).appendingPathComponent("lists")
        if FileManager.default.fileExists(atPath: lists) {
            do { try FileManager.default.removeItem(atPath: lists) } catch {
                throw ResetFailure("the database is wiped, but \(lists) could not be removed: \(error.localizedDescription); remove it by hand")
            }
        }
        print("Wiped \(state): the next start begins with an empty database and the starter credit.")
    }

    /// Whether a helper answers `GET /v1/health` on `socket` within two seconds.
    static func helperAnswers(socket: String) -> Bool {
        let client = ControlClient(socketPath: socket, timeoutSeconds: 2)
        do {
            _ = try client.call(ControlEndpoints.health)
            return true
        } catch {
            switch error {
            // A socket we may not open still belongs to someone: treat it as running. Any HTTP
            // answer at all is a helper too.
            case .permissionDenied, .refused: return true
            default: return false
            }
        }
    }
}

/// A reset that could not be done; the message says why and what to do.
struct ResetFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
