import Logging

/// `[helper]`: the process itself, and hosts mode (SPEC §10).
public enum HelperKeys {
    public static let stateDir = Setting(
        .helper, "state_dir", .text, default: .value("\"\""),
        allowed: absolutePathAllowed(example: "/var/lib/scrolloff"),
        doc: "Folder of the database and downloaded lists; \"\" = /var/lib/scrolloff as root, $XDG_STATE_HOME/scrolloff otherwise.",
        reload: .restart(\.paths.stateDirectory))
    public static let controlSocket = Setting(
        .helper, "control_socket", .text, default: .value("\"\""),
        allowed: absolutePathAllowed(example: "/run/scrolloff/control.sock"),
        doc: "The control socket the CLI talks to; \"\" = /run/scrolloff/control.sock as root, $XDG_RUNTIME_DIR/scrolloff/control.sock otherwise.",
        reload: .restart(\.paths.controlSocket))
    public static let mode = Setting(
        .helper, "mode", .choice(EnforcementMode.allCases.map(\.rawValue)), default: .value("\"dns\""),
        allowed: "dns, hosts or both",
        doc: "How rules are enforced: the DNS sinkhole, a managed section of hosts_file (the default profile's blocks; no DNS listener), or both.",
        reload: .restart(\.enforcementMode))
    public static let hostsFile = Setting(
        .helper, "hosts_file", .text, default: .value("\"/etc/hosts\""),
        allowed: absolutePathAllowed(example: "/etc/hosts"),
        doc: "The hosts file of hosts mode.",
        reload: .restart(\.hostsFile))
    public static let logLevel = Setting(
        .helper, "log_level", .choice(Logger.Level.allCases.map(\.rawValue)), default: .value("\"info\""),
        allowed: Logger.Level.allCases.map(\.rawValue).joined(separator: ", "),
        doc: "The least severe messages logged; allowed query names are never logged.",
        reload: .applies(\.logLevel))
    public static let threads = Setting(
        .helper, "threads", .integer(0...64), default: .value("0"),
        allowed: "0 (one per core) to 64",
        doc: "Threads answering DNS queries; 0 = one per CPU core the helper may run on.",
        reload: .restart(\.eventLoops))
    /// Both control-socket limits are taken at start, as one part.
    static let controlLimits = ReloadPart.restart(\.control, named: .label("helper.control_connections*"))
    public static let controlConnections = Setting(
        .helper, "control_connections", .integer(1...4096), default: .value("64"),
        allowed: "1 to 4096 connections",
        doc: "Connections to the control socket open at once (root and the helper's own user have their own share outside it).",
        reload: controlLimits)
    public static let controlConnectionsPerUser = Setting(
        .helper, "control_connections_per_user", .integer(1...4096), default: .value("8"),
        allowed: "1 to 4096 connections, at most control_connections",
        doc: "Connections to the control socket one user (uid) may hold at once.",
        reload: controlLimits)

    public static let all = [stateDir, controlSocket, mode, hostsFile, logLevel, threads, controlConnections, controlConnectionsPerUser]

    /// A path that must be absolute: the helper runs from systemd, whose working directory is `/`.
    static func absolutePathAllowed(example: String) -> String {
        "\"\" (the default) or an absolute path such as \"\(example)\""
    }
}
