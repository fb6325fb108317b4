/// What went wrong with the hosts file, and what to do about it.
public enum HostsFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The markers do not form one well-formed section; line numbers count from 1.
    case damagedSection(Damage)
    /// Reading, writing or renaming failed; `errno` is the system's error number.
    case io(operation: String, path: String, errno: Int32)
    /// The path is not a regular file (a symbolic link, a folder, a FIFO...): nothing was read or
    /// written. Followed, a link put in place of /etc/hosts made the root helper read the file it
    /// names (any file on the machine) and rename a copy of it over the link.
    case notARegularFile(path: String, found: FoundKind)
    /// The file (or its folder) carries an inode flag that stops even root from replacing it:
    /// `chattr +i` (immutable) or `chattr +a` (append only). chattr(1).
    case attributeForbids(operation: String, path: String, flag: Flag)

    public enum FoundKind: Equatable, Sendable, CustomStringConvertible {
        /// `target` as readlink(2) gives it, nil when it cannot be read.
        case symlink(target: String?)
        case directory
        /// Anything else: a FIFO, a socket, a device.
        case other

        public var description: String {
            switch self {
            case .symlink(let target?): "a symbolic link to \(target)"
            case .symlink(nil): "a symbolic link"
            case .directory: "a folder"
            case .other: "not a regular file (a FIFO, socket or device)"
            }
        }
    }

    public enum Flag: Equatable, Sendable {
        case immutable, appendOnly

        /// The letter chattr(1) and lsattr(1) use.
        public var letter: Character { self == .immutable ? "i" : "a" }
        var name: String { self == .immutable ? "immutable" : "append-only" }
    }

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
        case .notARegularFile(let path, let found):
            "\(path) is \(found), not a regular file. Scroll Off does not follow or replace it: it would read whatever the link "
                + "points to and put a copy of that in its place. Nothing was read or changed, and the section is not in force. "
                + (found == .directory || found == .other ? "" : "If the link was meant, start the helper with --hosts-file naming the real file; otherwise ")
                + "put a regular file back (`sudo rm \(path)`, then restore your hosts file, e.g. `sudo cp \(path).scrolloff.bak \(path)` "
                + "if that copy from before Scroll Off's first change is still right); the helper looks again on its own"
        case .attributeForbids(let operation, let path, let flag):
            "cannot \(operation) \(path): it is marked \(flag.name) (`chattr +\(flag.letter)`, shown by `lsattr`), which stops every write, "
                + "even root's. To let hosts mode keep its section there, run `sudo chattr -\(flag.letter) \(path)`; "
                + "the helper retries on its own"
        }
    }

    /// What to do about it, in one sentence, for `doctor`'s fix line; nil when only the log can tell.
    public var fix: String? {
        switch self {
        case .damagedSection, .io:
            // `doctor` has its own words for these (HostsModeStatus passes no fix).
            nil
        case .notARegularFile(let path, let found):
            found == .directory || found == .other
                ? "Put a regular hosts file back at \(path) (mode 0644, owned by root); the helper writes its section within seconds."
                : "Replace the link with a regular file: `sudo rm \(path)`, then restore your hosts file "
                    + "(e.g. `sudo cp \(path).scrolloff.bak \(path)`); or, if the link is meant, start the helper with --hosts-file naming the file it points to."
        case .attributeForbids(_, let path, let flag):
            "Run `sudo chattr -\(flag.letter) \(path)`: the \(flag.name) flag stops even the root helper from writing; "
                + "the helper writes its section within seconds after."
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
