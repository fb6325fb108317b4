#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Crash-safe file replacement: write a temporary file in the same directory, fsync it, rename it
/// over the target, fsync the directory. After a power cut the target is either the old or the new
/// file, whole (rename(2) is atomic within one file system; the directory fsync makes it durable).
enum DurableFile {
    /// Creates `directory` and its parents with `mode` where missing.
    static func ensureDirectory(_ directory: String, mode: mode_t = 0o700) throws(ListFetchError) {
        var path = ""
        for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
            path += "/" + component
            if mkdir(path, mode) != 0, lastErrno() != EEXIST {
                throw .localFile(path: path, operation: "create the folder", errno: lastErrno())
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .localFile(path: directory, operation: "use as a folder", errno: lastErrno() == 0 ? ENOTDIR : lastErrno())
        }
    }

    /// A new, empty, uniquely named file `<directory>/.<stem>.XXXXXX.part` (mode 0600).
    /// The leading dot and the suffix keep it apart from real copies for listings and cleanup.
    static func makeTemporaryFile(in directory: String, stem: String) throws(ListFetchError) -> String {
        var template = Array("\(directory)/.\(stem).XXXXXX.part".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemps(base, Int32(".part".utf8.count))
        }
        guard fd >= 0 else {
            throw .localFile(path: directory, operation: "create a temporary file in", errno: lastErrno())
        }
        close(fd)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// fsync(2) on a file that is already written and closed, its writeback started in steps first
    /// (`StepwiseIO.flush`): whoever wrote it may have left all its pages dirty.
    static func flush(_ path: String) throws(ListFetchError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .localFile(path: path, operation: "open", errno: lastErrno()) }
        defer { close(fd) }
        let error = StepwiseIO.flush(fd)
        guard error == 0 else { throw .localFile(path: path, operation: "flush", errno: error) }
    }

    /// Renames an fsynced `temporary` over `target` and makes the rename durable.
    ///
    /// The old target's cached pages are dropped in steps first: the rename ends the old inode's
    /// last link, and freeing a cached 30 MB copy inside it held the core 2.9–3.8 ms (SPEC §9.10,
    /// `StepwiseIO`). Its disk blocks are still freed inside the rename (ext4 frees the extents at
    /// the last iput): 0.1–0.2 ms of CPU for 30 MB, about one step, so left as they are — the old
    /// copy cannot be truncated in steps first, because a reader may have it open.
    static func replace(_ target: String, with temporary: String) throws(ListFetchError) {
        StepwiseIO.dropCachedPages(of: target)
        guard posixRename(temporary, target) == 0 else {
            throw .localFile(path: target, operation: "replace", errno: lastErrno())
        }
        try flushDirectory(of: target)
    }

    /// Writes `bytes` to `target` through a flushed temporary file and an atomic rename. The
    /// writes and their writeback go in steps (`StepwiseIO`), whatever the size.
    static func write(_ bytes: [UInt8], to target: String) throws(ListFetchError) {
        let directory = parent(of: target)
        let stem = String(target.split(separator: "/").last ?? "file")
        let temporary = try makeTemporaryFile(in: directory, stem: stem)
        if let failure = bytes.withUnsafeBytes({ StepwiseFile.write($0, to: temporary) }) {
            discard(temporary)
            throw failure
        }
        do throws(ListFetchError) {
            try replace(target, with: temporary)
        } catch {
            discard(temporary)
            throw error
        }
    }

    static func flushDirectory(of path: String) throws(ListFetchError) {
        let directory = parent(of: path)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .localFile(path: directory, operation: "open", errno: lastErrno()) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .localFile(path: directory, operation: "flush", errno: lastErrno()) }
    }

    /// Deletes a temporary file of the store (a download, held names) that nobody else reads,
    /// in steps (`StepwiseIO.discard`). Missing: nothing to do.
    static func discard(_ temporary: String) { StepwiseIO.discard(temporary) }

    /// Deletes a file others may read (a copy in force, its held names): its cached pages are
    /// dropped in steps first, so the unlink has only the inode and its blocks to free.
    static func delete(_ path: String) throws(ListFetchError) {
        StepwiseIO.dropCachedPages(of: path)
        if unlink(path) != 0 { throw .localFile(path: path, operation: "delete", errno: lastErrno()) }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// The whole file, or nil when it does not exist. Errors other than "missing" throw.
    static func readAll(_ path: String, limit: Int = 1 << 20) throws(ListFetchError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if lastErrno() == ENOENT { return nil }
            throw .localFile(path: path, operation: "open", errno: lastErrno())
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if lastErrno() == EINTR { continue }
                throw .localFile(path: path, operation: "read", errno: lastErrno())
            }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
            if bytes.count > limit { throw .localFile(path: path, operation: "read (file too large)", errno: EFBIG) }
        }
    }

    /// Names in `directory` (no `.` or `..`); empty when it does not exist.
    static func entries(of directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
