/// What went wrong with the hosts file, and what to do about it.
public enum HostsFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The markers do not form one well-formed section; line numbers count from 1.
    case damagedSection(Damage)
    /// Reading, writing or renaming failed; `errno` is the system's error number.
    case io(operation: String, path: String, errno: Int32)

    public enum Damage: Equatable, Sendable, CustomStringConvertible {
        case beginWithoutEnd(begin: Int)
        case twoBegins(first: Int, second: Int)
        case endWithoutBegin(end: Int)
        case twoSections(secondBegin: Int)

        public var description: String {
            switch self {
            case .beginWithoutEnd(let b): "line \(b) has '\(HostsMarker.begin)' but no '\(HostsMarker.end)' follows it"
            case .twoBegins(let a, let b): "lines \(a) and \(b) both have '\(HostsMarker.begin)' with no '\(HostsMarker.end)' between them"
            case .endWithoutBegin(let e): "line \(e) has '\(HostsMarker.end)' with no '\(HostsMarker.begin)' before it"
            case .twoSections(let b): "line \(b) starts a second managed section; there may be only one"
            }
        }

        /// The line numbers involved, for `doctor` and logs.
        public var lines: [Int] {
            switch self {
            case .beginWithoutEnd(let b): [b]
            case .twoBegins(let a, let b): [a, b]
            case .endWithoutBegin(let e): [e]
            case .twoSections(let b): [b]
            }
        }
    }

    public var description: String {
        switch self {
        case .damagedSection(let damage):
            "the scrolloff section of the hosts file is damaged: \(damage). Scroll Off will not guess which lines are its own: "
                + "edit the file so that exactly one '\(HostsMarker.begin)' line is followed by one '\(HostsMarker.end)' line "
                + "(or delete both markers and the lines between them), then it takes over again"
        case .io(let operation, let path, let errno):
            "cannot \(operation) \(path): \(Self.explain(errno))"
        }
    }

    static func explain(_ errno: Int32) -> String {
        switch errno {
        case 13, 1: "permission denied (errno \(errno)); hosts mode runs as root with /etc writable (see the unit's ReadWritePaths)"
        case 30: "the file system is read-only (errno 30); hosts mode needs /etc writable (see the unit's ReadWritePaths)"
        case 28: "the disk is full (errno 28); free some space, the helper retries on its own"
        case 2: "no such file or folder (errno 2); check --hosts-file"
        default: "errno \(errno) (\(String(cString: strerror(errno))))"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
