#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state directory and the database file with the permissions SPEC §11 asks for: only the
/// helper's user may read credits, events and client addresses.
package enum StateFiles {
    static let directoryMode: mode_t = 0o700
    static let fileMode: mode_t = 0o600
    package static let databaseName = "scrolloff.sqlite"

    /// Creates `directory` (and missing parents) as 0700 and tightens it to 0700 if it already
    /// exists; then creates the database file as 0600 before SQLite opens it.
    ///
    /// Why before SQLite: SQLite creates a missing file with 0644 minus the umask, and gives the
    /// `-wal` and `-shm` files the mode of the database file. Creating the file ourselves with an
    /// explicit `fchmod` makes all three 0600 whatever the umask is.
    /// - Returns: the database path.
    static func prepare(directory: String) throws(StoreError) -> String {
        try makeDirectory(directory)
        if chmod(directory, directoryMode) != 0 {
            throw .filesystem(path: directory, operation: "set mode 0700 on", errno: errno)
        }
        let path = directory.hasSuffix("/") ? directory + databaseName : directory + "/" + databaseName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, fileMode)
        guard fd >= 0 else {
            let e = errno
            if e == EROFS || e == EACCES || e == EPERM { throw .readOnly(path: path, detail: String(cString: strerror(e))) }
            throw .filesystem(path: path, operation: "create", errno: e)
        }
        defer { close(fd) }
        // The umask may have taken bits away at creation, and an older file may be too open.
        if fchmod(fd, fileMode) != 0 {
            throw .filesystem(path: path, operation: "set mode 0600 on", errno: errno)
        }
        return path
    }

    private static func makeDirectory(_ directory: String) throws(StoreError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw .filesystem(path: directory, operation: "use as a directory", errno: ENOTDIR)
            }
            return
        }
        let parent = parentOf(directory)
        if !parent.isEmpty, parent != directory { try makeDirectory(parent) }
        if mkdir(directory, directoryMode) != 0, errno != EEXIST {
            throw .filesystem(path: directory, operation: "create directory", errno: errno)
        }
    }

    private static func parentOf(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        return slash == p.startIndex ? "/" : String(p[..<slash])
    }
}
