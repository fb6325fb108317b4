import Config
import ControlAPI
import ControlTransport
import Helper
import ServiceKit

/// What `reset --wipe` and `hosts remove` share: both act on files the running helper owns, so
/// both read the same configuration and ask the same question, "is the helper still running?"
enum MaintenanceCommand {
    /// The configuration as `start` would read it, with the command's flags on top.
    /// - Parameter flagHint: the flag that names what the file would have named, for the error.
    static func configuration(file: String?, overrides: ConfigurationOverrides, flagHint: String) throws(MaintenanceFailure) -> HelperConfiguration {
        do {
            return try ConfigurationFile.load(path: file, base: RuntimePaths.current(), overrides: overrides)
        } catch {
            throw MaintenanceFailure("\(error.description)\nFix the file, or \(flagHint).")
        }
    }

    /// Whether a helper answers `ControlEndpoints.health` on `socket` within two seconds.
    static func helperAnswers(socket: String) -> Bool {
        let client = ControlClient(socketPath: socket, timeoutSeconds: 2)
        do {
            _ = try client.call(ControlEndpoints.health)
            return true
        } catch {
            switch error {
            // A socket we may not open still belongs to someone: treat it as running. Any HTTP
            // answer at all is a helper too.
            case .permissionDenied, .refused, .untrustedServer: return true
            default: return false
            }
        }
    }
}

/// A maintenance command that could not be done; the message says why and what to do.
struct MaintenanceFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
