#if canImport(Glibc)
import Engine
import Glibc
#endif
import Foundation

/// Puts the control socket in place safely (SPEC §11: 0660 root:scrolloff).
///
/// The listener is bound on a temporary name in the same folder, given its mode and group, and
/// only then renamed over the public path, so nobody ever connects to a socket with the wrong
/// permissions and a restart never leaves a moment without a socket file. An existing socket is
/// replaced only when nothing answers on it; if another helper answers, start-up stops.
public struct ControlSocketFile: Sendable {
    public var path: String
    public var mode: mode_t
    /// The group that may use the socket; when the system has no such group the socket keeps the
    /// helper's own group (so a non-root `make run` works out of the box).
    public var groupName: String?

    public init(path: String, mode: mode_t = 0o660, groupName: String? = "scrolloff") {
        self.path = path
        self.mode = mode
        self.groupName = groupName
    }

    var directory: String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }

    /// A temporary sibling name for binding; short, since socket paths are limited to 107 bytes.
    func temporaryPath() -> String {
        "\(directory)/.ctl.\(getpid()).\(UInt32.random(in: 0...UInt32.max) % 1_000_000)"
    }

    /// Creates the folder (0755, so group members can reach the socket) and checks that the path
    /// is free or held by a dead socket.
    func prepare() throws(ControlSocketError) {
        if !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            } catch {
                throw .cannotCreateDirectory(path: directory, detail: "\(error)")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { throw .notASocket(path: path) }
        if Self.somebodyAnswers(at: path) { throw .alreadyRunning(path: path) }
    }

    /// Sets mode and group on the freshly bound temporary socket and moves it into place.
    /// Returns the inode now at `path`, so shutdown removes only its own socket.
    func install(boundAt temporary: String) throws(ControlSocketError) -> ino_t {
        if let groupName, let gid = SystemGroups.groupID(named: groupName) {
            // An ordinary user (`make run`) may only give a file to a group they belong to; not
            // belonging to `scrolloff`, their socket keeps their own group, as when there is none.
            if chown(temporary, uid_t.max, gid) != 0, !(errno == EPERM && geteuid() != 0) {
                throw .setup(path: temporary, operation: "chown", errno: errno)
            }
        }
        if chmod(temporary, mode) != 0 { throw .setup(path: temporary, operation: "chmod", errno: errno) }
        // A helper that started in the meantime would have taken the path; check again right before.
        var info = stat()
        if lstat(path, &info) == 0, Self.somebodyAnswers(at: path) { throw .alreadyRunning(path: path) }
        if rename(temporary, path) != 0 { throw .setup(path: path, operation: "rename", errno: errno) }
        guard lstat(path, &info) == 0 else { throw .setup(path: path, operation: "stat", errno: errno) }
        return info.st_ino
    }

    /// Removes the socket at `path` if it is still the one this helper installed.
    func remove(inode: ino_t) {
        var info = stat()
        if lstat(path, &info) == 0, info.st_ino == inode { unlink(path) }
    }

    /// Whether a process accepts connections on the socket at `path`.
    static func somebodyAnswers(at path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // EAGAIN means a listener with a full backlog: alive, just busy.
        return result == 0 || errno == EAGAIN
    }
}

public enum ControlSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    case alreadyRunning(path: String)
    case notASocket(path: String)
    case cannotCreateDirectory(path: String, detail: String)
    case setup(path: String, operation: String, errno: Int32)
    case pathTooLong(path: String)

    public var description: String {
        switch self {
        case .alreadyRunning(let path):
            return "Another helper already answers on \(path). Stop it first (`sudo systemctl stop scrolloff-dns`), "
                + "or give this one another --control-socket."
        case .notASocket(let path):
            return "\(path) exists and is not a socket, so the control socket cannot go there. Move that file "
                + "away or choose another --control-socket."
        case .cannotCreateDirectory(let path, let detail):
            return "Could not create the folder \(path) for the control socket (\(detail)). Check its parent's permissions."
        case .setup(let path, let operation, let code):
            return "Could not \(operation) the control socket \(path): \(String(cString: strerror(code))) (errno \(code))."
        case .pathTooLong(let path):
            return "The control socket path \(path) is longer than the 107 bytes a Unix socket allows; choose a shorter one."
        }
    }
}
