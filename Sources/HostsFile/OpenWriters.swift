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
/// Two ways to look, since neither sees everything:
/// - a read lease (fcntl(2) `F_SETLEASE`, taken and dropped at once), which the kernel refuses
///   while any process has the file open for writing. It needs no capability, only to own the
///   file (the root helper owns /etc/hosts), but says nothing about who;
/// - `/proc`, which names the processes, but only those this process may inspect: under the
///   unit's capability bounding set the helper lacks CAP_SYS_PTRACE, so a root shell with every
///   capability is hidden from it there.
public enum OpenWriters {
    /// Whether some process has `path` open for writing, by the lease test; nil when the test
    /// cannot be made (not the file's owner, a file system without leases).
    /// fcntl(2)'s F_SETLEASE, which Swift's Glibc module does not export (it is `__USE_GNU`).
    static let setLease: Int32 = 1024

    public static func anyWriter(path: String) -> Bool? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if fcntl(fd, setLease, Int32(F_RDLCK)) == 0 {
            _ = fcntl(fd, setLease, Int32(F_UNLCK))
            return false
        }
        return errno == EAGAIN ? true : nil
    }

    /// The processes writing `path` as far as they can be seen: those `/proc` names, or, when the
    /// lease test sees a writer that `/proc` hides, an empty list with `hidden` set.
    public static func writing(path: String, device: UInt64, inode: UInt64) -> (pids: [Int32], hidden: Bool) {
        let pids = of(device: device, inode: inode)
        if !pids.isEmpty { return (pids, false) }
        return ([], anyWriter(path: path) == true)
    }

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
