/// `scrolloff-dns start` as a test launches it: typed options in, one command line out.
///
/// Every test that starts the real helper builds its command here, so a renamed or a newly
/// required flag is changed in one place, and the programs a test puts in front of the helper
/// (a user switch, a time-out, a namespace, environment) are stacked the same way everywhere.
public struct HelperLaunch: Sendable {
    /// What the helper serves (`--mode`).
    public enum Mode: String, Sendable {
        case dns, hosts, both
    }

    /// A program the helper runs under. Wrappers are applied outermost first; each execs the next.
    public enum Wrapper: Sendable, Equatable {
        /// `timeout SECONDS`: a start that hangs ends with 124 instead of stalling the test.
        case timeout(seconds: Int)
        /// `ip netns exec NAME`: inside a network namespace.
        case namespace(String)
        /// `setpriv ARGUMENTS`: another user (`--reuid`) or a smaller capability bounding set.
        case setpriv([String])
        /// Any other program and its arguments (`prlimit --nofile=300:300`, `unshare -m sh -c …`).
        case command([String])

        public var words: [String] {
            switch self {
            case .timeout(let seconds): ["/usr/bin/timeout", String(seconds)]
            case .namespace(let name): ["/usr/sbin/ip", "netns", "exec", name]
            case .setpriv(let arguments): ["/usr/bin/setpriv"] + arguments
            case .command(let words): words
            }
        }
    }

    /// The helper binary.
    public var executable: String
    /// `--listen` addresses; empty gives none (hosts mode listens nowhere).
    public var listen: [String]
    /// `--upstream` addresses, in order.
    public var upstreams: [String]
    public var stateDirectory: String?
    public var controlSocket: String?
    public var config: String?
    public var mode: Mode?
    /// `--web-listen`: an address, or `off`.
    public var webListen: String?
    /// More of `start`'s flags, after the others.
    public var extra: [String]
    public var wrappers: [Wrapper]
    /// Set through `/usr/bin/env` right in front of the helper, inside every wrapper: env execs in
    /// place, so `LD_PRELOAD` (faketime) reaches the helper and not a wrapper, and with no other
    /// wrapper the pid a test signals is the helper's own.
    public var environment: [String: String]
    /// Removed from the helper's environment (`env -u NAME`).
    public var unsetEnvironment: [String]

    public init(
        executable: String, listen: [String] = ["127.0.0.1:0"], upstreams: [String] = [], stateDirectory: String? = nil,
        controlSocket: String? = nil, config: String? = nil, mode: Mode? = nil, webListen: String? = nil, extra: [String] = [],
        wrappers: [Wrapper] = [], environment: [String: String] = [:], unsetEnvironment: [String] = []
    ) {
        self.executable = executable
        self.listen = listen
        self.upstreams = upstreams
        self.stateDirectory = stateDirectory
        self.controlSocket = controlSocket
        self.config = config
        self.mode = mode
        self.webListen = webListen
        self.extra = extra
        self.wrappers = wrappers
        self.environment = environment
        self.unsetEnvironment = unsetEnvironment
    }

    /// An upstream on loopback, as test upstreams run.
    public static func loopback(_ port: Int) -> String { "127.0.0.1:\(port)" }

    /// `start` and its flags: what the helper's own argv holds after its path.
    public var arguments: [String] {
        var arguments = ["start"]
        if let config { arguments += ["--config", config] }
        if let mode { arguments += ["--mode", mode.rawValue] }
        for address in listen { arguments += ["--listen", address] }
        for address in upstreams { arguments += ["--upstream", address] }
        if let stateDirectory { arguments += ["--state-dir", stateDirectory] }
        if let controlSocket { arguments += ["--control-socket", controlSocket] }
        if let webListen { arguments += ["--web-listen", webListen] }
        return arguments + extra
    }

    /// The whole command line: the wrappers, `env` when there is environment, the helper and its
    /// arguments. The first word is the program to spawn.
    public var command: [String] {
        var words = wrappers.flatMap(\.words)
        if !environment.isEmpty || !unsetEnvironment.isEmpty {
            // Sorted, so a test's command line (and its log) is the same from run to run.
            words += ["/usr/bin/env"] + unsetEnvironment.flatMap { ["-u", $0] }
                + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        }
        return words + [executable] + arguments
    }
}
