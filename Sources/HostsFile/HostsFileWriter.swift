#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Reads and rewrites one hosts file so that a reader never sees half a file (SPEC §10).
///
/// A change goes to a temporary file in the same folder (same file system, so the rename is
/// atomic), which is fsynced, renamed over the file, and then the folder is fsynced so the rename
/// itself survives a power cut. The file's mode and owner are copied onto the new file. When the
/// file is a mount point (a bind mount, a container's /etc/hosts) the rename fails with EBUSY or
/// EXDEV; then the current bytes are saved next to it and the file is written in place.
public struct HostsFileWriter: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The untouched file as it was before Scroll Off first changed it; never overwritten.
    public var backupPath: String { path + ".scrolloff.bak" }
    /// The file as it was before the latest in-place write, for a crash in the middle of one.
    public var inPlaceBackupPath: String { path + ".scrolloff.prev" }

    public enum Outcome: Equatable, Sendable {
        /// The file already held these bytes: not touched, its mtime unchanged.
        case unchanged
        /// Written; `inPlace` when the rename was refused (a mount point).
        case written(inPlace: Bool)
        /// Not written: these processes hold the file open for writing (``OpenWriters``); asked
        /// for with `waitForWriters`. None named: a writer this process may not name (seen by the
        /// lease test), or the file changed between reading it and the rename (a writer that
        /// finished meanwhile), so the new section would have dropped that change.
        case writersOpen([Int32])
    }

    /// The file's current layout.
    public func read() throws(HostsFileError) -> HostsLayout {
        try HostsLayout(parsing: readFile().bytes)
    }

    /// What one ``apply(_:)`` found and did.
    public struct Applied: Sendable {
        public var outcome: Outcome
        /// The file as it was read, before any write.
        public var previous: HostsLayout
        /// The section now in the file (empty: none).
        public var section: [UInt8]
    }

    /// Reads the file, asks `render` for the section in the file's own line break (CRLF stays
    /// CRLF), and puts it at the top in place of the old one, unless the file already holds it there.
    /// - Parameter waitForWriters: when another process holds the file open for writing, write
    ///   nothing and say who (`.writersOpen`): the file may be half-written, and a rename now would
    ///   send the rest of their writes to an inode no longer in the folder.
    /// - Throws: `HostsFileError.damagedSection` without touching the file, or `.io`.
    public func apply(waitForWriters: Bool = false, _ render: (HostsLayout.LineBreak) -> [UInt8]) throws(HostsFileError) -> Applied {
        let (bytes, info) = try readFile()
        let layout = try HostsLayout(parsing: bytes)
        let section = render(layout.lineBreak)
        if layout.alreadyHolds(section) { return Applied(outcome: .unchanged, previous: layout, section: section) }
        if waitForWriters {
            let writers = OpenWriters.writing(path: path, device: info.device, inode: info.inode)
            if !writers.pids.isEmpty || writers.hidden {
                return Applied(outcome: .writersOpen(writers.pids), previous: layout, section: section)
            }
        }
        // Written as three pieces (section, then the user's bytes before and after the old one)
        // rather than joined into a second 4.7 MB copy first.
        let outcome = try write([section[...], layout.before, layout.after], over: bytes, info: info)
        return Applied(outcome: outcome, previous: layout, section: section)
    }

    /// Puts `section` (from `HostsSection.render`) at the top in place of the managed section.
    /// - Throws: `HostsFileError.damagedSection` without touching the file, or `.io`.
    @discardableResult
    public func setSection(_ section: [UInt8]) throws(HostsFileError) -> Outcome {
        try apply { _ in section }.outcome
    }

    /// Like `setSection`, but rendering the names in the file's own line break (CRLF stays CRLF).
    @discardableResult
    public func setSection(names: some Sequence<String>, excluding excluded: Set<String> = []) throws(HostsFileError) -> Outcome {
        try apply { HostsSection.render(names: names, excluding: excluded, lineBreak: $0) }.outcome
    }

    /// Takes the managed section out, leaving every other byte as it was.
    @discardableResult
    public func removeSection() throws(HostsFileError) -> Outcome {
        try setSection([])
    }

    /// Deletes temporary files a killed writer left beside the file (`.hosts.scrolloff-XXXXXX`):
    /// a kill between `mkstemp` and the rename leaves one, never a half-written hosts file.
    /// - Returns: how many were removed.
    @discardableResult
    public func removeLeftovers() -> Int {
        let folder = Self.folder(of: path)
        let prefix = "." + (path.split(separator: "/").last.map(String.init) ?? "hosts") + ".scrolloff-"
        guard let dir = opendir(folder) else { return 0 }
        defer { closedir(dir) }
        var removed = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // mkstemp's six random characters, nothing else: a user's own file is never matched.
            guard name.hasPrefix(prefix), name.utf8.count == prefix.utf8.count + 6 else { continue }
            if unlink(folder + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    // MARK: - Files

    struct FileInfo {
        var mode: mode_t
        var uid: uid_t
        var gid: gid_t
        var device: UInt64 = 0
        var inode: UInt64 = 0
        /// Size and change time as read, to see whether the file changed before a rename replaces it.
        var size: Int64 = 0
        var changed: timespec = timespec()

        func isSameVersion(as other: stat) -> Bool {
            UInt64(other.st_dev) == device && UInt64(other.st_ino) == inode && Int64(other.st_size) == size
                && other.st_ctim.tv_sec == changed.tv_sec && other.st_ctim.tv_nsec == changed.tv_nsec
        }
    }

    func readFile() throws(HostsFileError) -> (bytes: [UInt8], info: FileInfo) {
        // The hosts file is a regular file; anything else in its place is refused, not followed.
        // A symbolic link (O_NOFOLLOW: ELOOP) followed would have the root helper read the file it
        // names, keep a copy of it as the backup and rename the copy, mode and all, over the link.
        // O_NONBLOCK: a FIFO put there would otherwise hang the open until someone wrote to it.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let error = errno
            if error == ELOOP, let link = Self.symbolicLink(at: path) { throw .notARegularFile(path: path, found: link) }
            throw .io(operation: "read", path: path, errno: error)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .io(operation: "read", path: path, errno: errno) }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw .notARegularFile(path: path, found: .directory)
        default: throw .notARegularFile(path: path, found: .other)
        }
        // One buffer of the size fstat reports (a 4.7 MB section read in one call), grown only if
        // the file grew in between; reading goes on to end of file either way.
        var bytes = [UInt8](repeating: 0, count: max(Int(st.st_size), 0) + 4096)
        var filled = 0
        while true {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 64 * 1024))) }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", path: path, errno: errno)
            }
            if n == 0 { break }
            filled += n
        }
        bytes.removeSubrange(filled...)
        return (bytes, FileInfo(
            mode: st.st_mode & 0o7777, uid: st.st_uid, gid: st.st_gid, device: UInt64(st.st_dev), inode: UInt64(st.st_ino),
            size: Int64(st.st_size), changed: st.st_ctim))
    }

    /// Writes the file as the concatenation of `pieces`. The caller has checked that it differs.
    func write(_ pieces: [ArraySlice<UInt8>], over old: [UInt8], info: FileInfo) throws(HostsFileError) -> Outcome {
        // The first change keeps the file as the user had it; later changes never replace that copy.
        if access(backupPath, F_OK) != 0 {
            try replace(backupPath, with: [old[...]], info: info)
        }
        switch try replace(path, with: pieces, info: info, unlessChangedSince: info) {
        case .renamed: return .written(inPlace: false)
        case .changedMeanwhile: return .writersOpen([])
        case .mountPoint: break
        }
        // A mount point cannot be renamed over: keep what is there, then write in place.
        try replace(inPlaceBackupPath, with: [old[...]], info: info)
        guard try writeInPlace(pieces, over: info) else { return .writersOpen([]) }
        return .written(inPlace: true)
    }

    enum Replaced { case renamed, mountPoint, changedMeanwhile }

    /// Writes `pieces` to a temporary file beside `target` and renames it over `target`: two
    /// fsyncs (the file, then its folder), the least that makes the rename survive a power cut.
    /// - Parameter read: the target as it was read; if it changed since (size, inode or change
    ///   time), nothing is renamed: someone wrote it after the read, and the rename would drop that.
    /// - Returns: `.mountPoint` when the rename was refused because `target` is a mount point
    ///   (EBUSY, EXDEV); the temporary file is removed then, as it is for `.changedMeanwhile`.
    @discardableResult
    func replace(_ target: String, with pieces: [ArraySlice<UInt8>], info: FileInfo, unlessChangedSince read: FileInfo? = nil) throws(HostsFileError) -> Replaced {
        let folder = Self.folder(of: target)
        let base = target.split(separator: "/").last.map(String.init) ?? "hosts"
        var template = Array("\(folder)/.\(base).scrolloff-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            let error = errno
            if let flag = Self.forbiddingFlag(folder, after: error) {
                throw .attributeForbids(operation: "create a temporary file in", path: folder, flag: flag)
            }
            throw .io(operation: "create a temporary file in", path: folder, errno: error)
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            close(fd)
            if !renamed { unlink(temporary) }
        }
        // mkstemp makes 0600 root:root; the hosts file must stay readable by every user.
        guard fchmod(fd, info.mode) == 0 else { throw .io(operation: "set the mode of", path: temporary, errno: errno) }
        if fchown(fd, info.uid, info.gid) != 0, errno != EPERM {
            throw .io(operation: "set the owner of", path: temporary, errno: errno)
        }
        try Self.writeAll(fd, pieces, path: temporary)
        guard fsync(fd) == 0 else { throw .io(operation: "flush", path: temporary, errno: errno) }
        // The last look before the rename: a writer that finished while this one prepared (the
        // check for open writers takes a while on a busy machine) changed the file since the read.
        // lstat: a symbolic link put in the file's place meanwhile is a change too (the next read refuses it).
        if let read {
            var now = stat()
            if lstat(target, &now) == 0, !read.isSameVersion(as: now) { return .changedMeanwhile }
        }
        guard rename(temporary, target) == 0 else {
            let error = errno
            if error == EBUSY || error == EXDEV { return .mountPoint }
            // `chattr +i` (or +a) on the file or its folder: EPERM, even for root. Said as such, since
            // "permission denied" sent people to the unit's ReadWritePaths, which cannot help.
            if let flag = Self.forbiddingFlag(target, after: error) {
                throw .attributeForbids(operation: "replace", path: target, flag: flag)
            }
            if let flag = Self.forbiddingFlag(folder, after: error) {
                throw .attributeForbids(operation: "replace", path: folder, flag: flag)
            }
            throw .io(operation: "replace", path: target, errno: error)
        }
        renamed = true
        Self.syncFolder(folder)
        return .renamed
    }

    /// Overwrites the file's bytes where it is, then cuts it to length: for a mount point only.
    /// - Returns: false, writing nothing, when the path no longer holds the file that was read.
    func writeInPlace(_ pieces: [ArraySlice<UInt8>], over read: FileInfo) throws(HostsFileError) -> Bool {
        // Not through a link, and only into the inode that was read (see `readFile`).
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let error = errno
            if error == ELOOP, let link = Self.symbolicLink(at: path) { throw .notARegularFile(path: path, found: link) }
            if let flag = Self.forbiddingFlag(path, after: error) { throw .attributeForbids(operation: "write", path: path, flag: flag) }
            throw .io(operation: "write", path: path, errno: error)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .io(operation: "write", path: path, errno: errno) }
        guard UInt64(st.st_dev) == read.device, UInt64(st.st_ino) == read.inode else { return false }
        try Self.writeAll(fd, pieces, path: path)
        let length = pieces.reduce(0) { $0 + $1.count }
        guard ftruncate(fd, off_t(length)) == 0 else { throw .io(operation: "truncate", path: path, errno: errno) }
        guard fsync(fd) == 0 else { throw .io(operation: "flush", path: path, errno: errno) }
        return true
    }

    /// What a path found where the hosts file should be is, when it is a symbolic link.
    static func symbolicLink(at path: String) -> HostsFileError.FoundKind? {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK else { return nil }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &target, target.count - 1)
        return .symlink(target: n >= 0 ? String(decoding: target[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil)
    }

    /// FS_IOC_GETFLAGS (`_IOR('f', 1, long)`) and its two flags that forbid a change (linux/fs.h).
    static let getFlags: UInt = 0x8008_6601
    static let immutableFlag = 0x10
    static let appendFlag = 0x20

    /// The inode flag on `path` that explains a refused change (`error` EPERM or EACCES), if any.
    static func forbiddingFlag(_ path: String, after error: Int32) -> HostsFileError.Flag? {
        guard error == EPERM || error == EACCES else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // The kernel writes an int; a zeroed long leaves the upper half 0 either way.
        var flags = 0
        guard ioctl(fd, getFlags, &flags) == 0 else { return nil }
        if flags & immutableFlag != 0 { return .immutable }
        if flags & appendFlag != 0 { return .appendOnly }
        return nil
    }

    /// Writes the pieces one after another from offset 0.
    static func writeAll(_ fd: Int32, _ pieces: [ArraySlice<UInt8>], path: String) throws(HostsFileError) {
        var fileOffset = 0
        for piece in pieces {
            var offset = 0
            while offset < piece.count {
                let n = piece.withUnsafeBytes { pwrite(fd, $0.baseAddress! + offset, $0.count - offset, off_t(fileOffset + offset)) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw .io(operation: "write", path: path, errno: errno)
                }
                offset += n
            }
            fileOffset += piece.count
        }
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Best effort: a folder that cannot be opened or synced still has the rename, just not yet on disk.
    static func syncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
