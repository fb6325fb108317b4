#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One helper per state folder (SPEC §11): an exclusive `flock` on `scrolloff-dns.lock` in the
/// folder, taken before the database is opened or anything is bound, so a second helper on a
/// running helper's folder stops at once, having touched nothing, and says which process holds it.
/// The kernel drops the lock when the holder exits, however it exits (kill -9 included), so a
/// stale file never keeps a helper from starting.
public final class StateFolderLock: @unchecked Sendable {
    public static let fileName = "scrolloff-dns.lock"
    private var descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Takes the lock without waiting and writes this process's pid into the file.
    public static func acquire(stateDirectory: String) throws(StateFolderLockError) -> StateFolderLock {
        let path = (stateDirectory as NSString).appendingPathComponent(fileName)
        // O_NOFOLLOW: a link put here would make root create or truncate a file elsewhere.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = readPID(fd)
            close(fd)
            if code == EWOULDBLOCK { throw .heldByAnother(folder: stateDirectory, pid: holder) }
            throw .cannotOpen(path: path, errno: code)
        }
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        return StateFolderLock(descriptor: fd)
    }

    /// Lets the lock go (a helper run in-process by a test starts again on the same folder).
    public func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

public enum StateFolderLockError: Error, Equatable, CustomStringConvertible {
    case heldByAnother(folder: String, pid: Int32?)
    case cannotOpen(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .heldByAnother(let folder, let pid):
            return "another scrolloff-dns\(pid.map { " (pid \($0))" } ?? "") uses \(folder). Stop it first "
                + "(`sudo systemctl stop scrolloff-dns`, or Ctrl-C in its terminal), or give this one another --state-dir."
        case .cannotOpen(let path, let code):
            return "Could not open the lock file \(path): \(String(cString: strerror(code))) (errno \(code)). "
                + "Check the state folder's owner and permissions, or choose another --state-dir."
        }
    }
}
