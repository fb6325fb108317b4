import ArgumentParser
import Config
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
        let configuration = try MaintenanceCommand.configuration(file: configFile, overrides: overrides, flagHint: "name the folder with --state-dir")
        let state = configuration.paths.stateDirectory
        let socket = configuration.paths.controlSocket
        if MaintenanceCommand.helperAnswers(socket: socket) {
            throw MaintenanceFailure(
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
            throw MaintenanceFailure("\(error)")
        }
        let lists = (state as NSString).appendingPathComponent("lists")
        if FileManager.default.fileExists(atPath: lists) {
            do { try FileManager.default.removeItem(atPath: lists) } catch {
                throw MaintenanceFailure("the database is wiped, but \(lists) could not be removed: \(error.localizedDescription); remove it by hand")
            }
        }
        print("Wiped \(state): the next start begins with an empty database and the starter credit.")
    }
}
