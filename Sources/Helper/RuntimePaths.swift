#if canImport(Glibc)
import Glibc
#endif
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
        if isRoot {
            return RuntimePaths(
                configFile: "/etc/scrolloff/scrolloff.toml",
                stateDirectory: "/var/lib/scrolloff",
                controlSocket: "/run/scrolloff/control.sock",
                listen: ["127.0.0.1:53", "[::1]:53"]
            )
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let stateBase = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.local/state"
        let state = "\(stateBase)/scrolloff"
        let configBase = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.config"
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        return RuntimePaths(
            configFile: "\(configBase)/scrolloff/scrolloff.toml",
            stateDirectory: state,
            controlSocket: runtime.map { "\($0)/scrolloff/control.sock" } ?? "\(state)/control.sock",
            listen: ["127.0.0.1:5300"]
        )
    }

    /// The defaults for this process.
    public static func current() -> RuntimePaths {
        defaults(isRoot: geteuid() == 0, environment: ProcessInfo.processInfo.environment)
    }
}
