#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where the helper keeps its configuration, state and control socket before any flag or
/// configuration file is applied (SPEC §13).
///
/// It lives here, not in the helper, because the CLI must find the same socket the helper opens
/// without linking the helper (and SwiftNIO) into a command that should start in milliseconds.
/// As root the helper takes the locations a system service expects; as an ordinary user it works
/// out of the box under the user's own folders.
public struct DefaultLocations: Sendable, Equatable {
    public var configFile: String
    public var stateDirectory: String
    public var controlSocket: String

    /// The system socket, used by the root helper and by a CLI run as anyone when it exists.
    public static let systemControlSocket = "/run/scrolloff/control.sock"

    /// - Parameters:
    ///   - isRoot: whether the process runs with effective uid 0.
    ///   - environment: the process environment (injected so tests can vary it).
    public static func defaults(isRoot: Bool, environment: [String: String]) -> DefaultLocations {
        if isRoot {
            return DefaultLocations(
                configFile: "/etc/scrolloff/scrolloff.toml",
                stateDirectory: "/var/lib/scrolloff",
                controlSocket: systemControlSocket
            )
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        // XDG base directories must be absolute; a relative value is ignored as the spec says.
        let stateBase = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.local/state"
        let state = "\(stateBase)/scrolloff"
        let configBase = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.config"
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        return DefaultLocations(
            configFile: "\(configBase)/scrolloff/scrolloff.toml",
            stateDirectory: state,
            controlSocket: runtime.map { "\($0)/scrolloff/control.sock" } ?? "\(state)/control.sock"
        )
    }

    /// The defaults for this process.
    public static func current() -> DefaultLocations {
        defaults(isRoot: geteuid() == 0, environment: ProcessInfo.processInfo.environment)
    }

    /// The socket the CLI talks to when neither `--socket` nor `SCROLLOFF_SOCKET` names one.
    ///
    /// The CLI usually runs as an ordinary member of group `scrolloff` while the helper runs as
    /// root, so the system socket wins whenever it exists; otherwise the CLI looks where a helper
    /// started by the same user (`make run`) would have put it.
    public static func cliControlSocket(
        environment: [String: String],
        isRoot: Bool,
        fileExists: (String) -> Bool
    ) -> String {
        if let explicit = environment["SCROLLOFF_SOCKET"], !explicit.isEmpty { return explicit }
        if isRoot || fileExists(systemControlSocket) { return systemControlSocket }
        return defaults(isRoot: false, environment: environment).controlSocket
    }
}
