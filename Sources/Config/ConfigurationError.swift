/// One thing wrong with one key of the configuration file: which key, on which line, what is wrong
/// and what would be accepted (SPEC §13: every problem names the key, the line and what is allowed).
public struct ConfigurationProblem: Sendable, Hashable, CustomStringConvertible {
    /// The dotted path of the key, items counted from 1: `profiles[1].knobs.cooldown`.
    public var key: String
    /// 1-based; nil only when the key was not written in the file at all (a required key missing
    /// from a table that has no header line of its own).
    public var line: Int?
    /// What is wrong, numbers first: `is "30s"`, `is a string`, `is not a key of [dns]`.
    public var problem: String
    /// What would be accepted, in words: `1 s to 10 s`, `null, nxdomain or refused`.
    public var allowed: String?

    public init(key: String, line: Int?, problem: String, allowed: String?) {
        self.key = key
        self.line = line
        self.problem = problem
        self.allowed = allowed
    }

    /// `line 14: dns.blocked_ttl is "30s"; allowed: 1 s to 10 s`
    public var description: String {
        let at = line.map { "line \($0): " } ?? ""
        let what = allowed.map { "; allowed: \($0)" } ?? ""
        return "\(at)\(key) \(problem)\(what)"
    }
}

/// Why a configuration file could not be used. Every case names the file; `check-config` prints
/// the description as is, and a reload keeps the old configuration and logs it.
public enum ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// A file named with `--config` that does not exist, or any file that cannot be read.
    case unreadable(path: String, reason: String)
    /// Not TOML at all; TOMLKit's own message and position.
    case syntax(path: String, line: Int, column: Int, message: String)
    /// Valid TOML, but keys unknown, of the wrong type or out of range: all of them, in line order.
    case invalid(path: String, problems: [ConfigurationProblem])

    /// The problems as a list, a syntax error being one problem without a key.
    public var problems: [ConfigurationProblem] {
        switch self {
        case .unreadable(_, let reason): [ConfigurationProblem(key: "", line: nil, problem: reason, allowed: nil)]
        case .syntax(_, let line, let column, let message):
            [ConfigurationProblem(key: "", line: line, problem: "column \(column): \(message)", allowed: nil)]
        case .invalid(_, let problems): problems
        }
    }

    public var path: String {
        switch self {
        case .unreadable(let path, _), .syntax(let path, _, _, _), .invalid(let path, _): path
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read the configuration file \(path): \(reason)"
        case .syntax(let path, let line, let column, let message):
            return "\(path):\(line):\(column): not valid TOML: \(message). Fix that line; "
                + "`scrolloff-dns check-config --config \(path)` checks the file without starting."
        case .invalid(let path, let problems):
            let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
            let lines = problems.map { problem in
                let location = problem.line.map { "\(path):\($0)" } ?? path
                let what = problem.allowed.map { "; allowed: \($0)" } ?? ""
                return "\(location): \(problem.key) \(problem.problem)\(what)"
            }
            return "\(count) in \(path):\n" + lines.joined(separator: "\n")
        }
    }
}
