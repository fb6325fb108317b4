#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The processes that hold a file open for writing, read from `/proc/<pid>/fd` and
/// `/proc/<pid>/fdinfo` (proc(5)).
///
/// Why the hosts writer asks: a shell's `command > /etc/hosts` truncates the file when it opens it
/// and writes only when `command` has output, which may be seconds later. Renaming the section over
/// the file in between would leave the command writing into the old inode, gone from the folder:
/// everything it wrote would be lost. So a write waits while someone holds the file open for
/// writing (`IN_CLOSE_WRITE` wakes the watcher when they are done).
///
/// Processes whose `/proc` entries this process may not read (another user's, for a helper not run
/// as root) are not seen; a hosts file they could write is rare for such a helper.
public enum OpenWriters {
    /// Process IDs with a descriptor open for writing on the inode `device`/`inode`, this process
    /// excluded, in ascending order.
    public static func of(device: UInt64, inode: UInt64) -> [Int32] {
        guard let proc = opendir("/proc") else { return [] }
        defer { closedir(proc) }
        let me = getpid()
        var found: [Int32] = []
        while let entry = readdir(proc) {
            let name = entryName(entry)
            guard let pid = Int32(name), pid != me else { continue }
            if holdsForWriting(pid: pid, device: device, inode: inode) { found.append(pid) }
        }
        return found.sorted()
    }

    /// The writers of the file at `path`, or none if it cannot be stat'ed.
    public static func of(path: String) -> [Int32] {
        var st = stat()
        guard stat(path, &st) == 0 else { return [] }
        return of(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    static func holdsForWriting(pid: Int32, device: UInt64, inode: UInt64) -> Bool {
        let folder = "/proc/\(pid)/fd"
        guard let fds = opendir(folder) else { return false }
        defer { closedir(fds) }
        while let entry = readdir(fds) {
            let fd = entryName(entry)
            guard Int32(fd) != nil else { continue }
            var st = stat()
            guard stat("\(folder)/\(fd)", &st) == 0, UInt64(st.st_dev) == device, UInt64(st.st_ino) == inode else { continue }
            if let flags = openFlags(pid: pid, fd: fd), flags & O_ACCMODE != O_RDONLY { return true }
        }
        return false
    }

    /// The `flags:` line of `/proc/<pid>/fdinfo/<fd>`, in octal (proc(5)).
    static func openFlags(pid: Int32, fd: String) -> Int32? {
        guard let file = fopen("/proc/\(pid)/fdinfo/\(fd)", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("flags:") else { continue }
            return Int32(text.dropFirst("flags:".count).trimmingWhitespace, radix: 8)
        }
        return nil
    }

    static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

extension Substring {
    fileprivate var trimmingWhitespace: Substring {
        drop { $0 == " " || $0 == "\t" }.prefix { $0 != " " && $0 != "\t" && $0 != "\n" }
    }
}
