#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import Foundation

/// Where the helper keeps its state, its control socket and its configuration, and where it listens,
/// before any flag or configuration file is applied (SPEC §13).
///
/// As root it takes the system locations a service expects; as an ordinary user it works out of the box
/// under the user's own folders on an unprivileged port, so `make run` needs no privileges.
public struct RuntimePaths: Sendable, Equatable {
    public var configFile: String
    public var stateDirectory: String
    public var controlSocket: String
    public var listen: [String]

    /// - Parameters:
    ///   - isRoot: whether the process runs with effective uid 0.
    ///   - environment: the process environment (injected so tests can vary it).
    public static func defaults(isRoot: Bool, environment: [String: String]) -> RuntimePaths {
        // The file locations live in ControlAPI so the CLI finds the same socket without linking the helper.
        let locations = DefaultLocations.defaults(isRoot: isRoot, environment: environment)
        return RuntimePaths(
            configFile: locations.configFile,
            stateDirectory: locations.stateDirectory,
            controlSocket: locations.controlSocket,
            listen: isRoot ? ["127.0.0.1:53", "[::1]:53"] : ["127.0.0.1:5300"]
        )
    }

    /// The defaults for this process.
    public static func current() -> RuntimePaths {
        defaults(isRoot: geteuid() == 0, environment: ProcessInfo.processInfo.environment)
    }
}
