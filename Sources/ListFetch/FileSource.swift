#if canImport(Glibc)
import Glibc
#endif

/// Reads a file:// list into the transfer's destination by the helper itself, not by libcurl,
/// whose file:// reader follows symbolic links and knows nobody's rights.
///
/// The path is walked from `/` one component at a time with `openat(…, O_NOFOLLOW)`, so a
/// symbolic link anywhere in it is refused, and the file read is the very inode that was checked
/// (no check-then-open race). For a member's source (`SourceAccess.reader`) every folder on the
/// way must be searchable by the member and the file readable by them, decided from the opened
/// descriptors' owner, group and mode as the kernel would (the helper runs as root, so asking the
/// kernel with access(2) or faccessat would answer for root); a folder or file with an ACL is
/// refused, since its mode bits alone do not say who may read it.
enum FileSource {
    /// Copies the file at `path` through `context` (the size cap, the stepwise writeback).
    static func copy(url: String, path: String, access: SourceAccess, context: TransferContext) -> ListFetchError? {
        if let refusal = access.refusal(ofFile: path) { return .sourceRefused(url: url, reason: refusal) }
        guard let components = SourceAccess.components(of: path), !components.isEmpty else {
            return .fileNotFound(path: path)
        }
        let opened = open(components: components, path: path, url: url, access: access)
        let fd: Int32
        switch opened {
        case .failure(let error): return error
        case .success(let descriptor): fd = descriptor
        }
        defer { close(fd) }
        let size = 64 << 10
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n < 0 {
                if errno == EINTR { continue }
                return .localFile(path: path, operation: "read", errno: errno)
            }
            if n == 0 { break }
            if context.write(UnsafeRawBufferPointer(start: buffer, count: n)) != n {
                if context.cancel.isCancelled { return .cancelled(url: url) }
                if context.capExceeded { return .tooLarge(url: url, limitBytes: context.maxBytes) }
                return .localFile(path: "the list's temporary copy", operation: "write", errno: context.writeErrno)
            }
            context.progress.offer(received: context.bytesWritten, expected: -1)
        }
        return nil
    }

    private static func open(components: [String], path: String, url: String, access: SourceAccess) -> Result<Int32, ListFetchError> {
        var dir = Glibc.open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { return .failure(.localFile(path: "/", operation: "open", errno: errno)) }
        var walked = ""
        for (index, component) in components.enumerated() {
            let isLast = index == components.count - 1
            let here = walked + "/" + component
            if let refusal = checkFolder(dir, walked.isEmpty ? "/" : walked, access: access) {
                close(dir)
                return .failure(.sourceRefused(url: url, reason: refusal))
            }
            let flags = isLast ? (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) : (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let next = openat(dir, component, flags)
            let failure = errno
            if next < 0 {
                var info = stat()
                let isLink = fstatat(dir, component, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
                close(dir)
                if isLink {
                    return .failure(.sourceRefused(url: url, reason: "\(here) is a symbolic link. A list file is read only by its real path, "
                        + "with no link anywhere in it (a link can point at a file the list's owner may not read); add the list again with the file's real path."))
                }
                if failure == ENOENT || failure == ENOTDIR || failure == EACCES { return .failure(.fileNotFound(path: path)) }
                return .failure(.localFile(path: here, operation: "open", errno: failure))
            }
            close(dir)
            dir = next
            walked = here
        }
        // `dir` is now the file itself.
        var info = stat()
        guard fstat(dir, &info) == 0 else {
            let failure = errno
            close(dir)
            return .failure(.localFile(path: path, operation: "stat", errno: failure))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(dir)
            return .failure(.sourceRefused(url: url, reason: "\(path) is not a regular file (a folder, device or pipe); a list is read from a regular file."))
        }
        if let reader = access.reader {
            let withACL = hasACL(dir)
            if withACL || !access.readerMay(4, info) {
                close(dir)
                let acl = withACL ? ", with an ACL" : ""
                return .failure(.sourceRefused(url: url, reason: "uid \(reader.uid) may not read \(path) (owner uid \(info.st_uid), group \(info.st_gid), "
                    + "mode \(String(info.st_mode & 0o7777, radix: 8))\(acl)). A member's list file must be one they may read themselves: "
                    + "make it readable to you with chmod, or ask an administrator to run `sudo scrolloff lists add \(url)`."))
            }
        }
        // Reads block from here on, as for any regular file (O_NONBLOCK only kept open(2) from
        // waiting on a FIFO swapped in).
        let flags = fcntl(dir, F_GETFL)
        if flags >= 0 { _ = fcntl(dir, F_SETFL, flags & ~O_NONBLOCK) }
        return .success(dir)
    }

    /// Why the member may not pass through the folder open as `fd`; nil when they may.
    private static func checkFolder(_ fd: Int32, _ path: String, access: SourceAccess) -> String? {
        guard let reader = access.reader else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return "\(path) cannot be examined (errno \(errno))." }
        if hasACL(fd) || !access.readerMay(1, info) {
            return "uid \(reader.uid) may not open the folder \(path) (owner uid \(info.st_uid), group \(info.st_gid), "
                + "mode \(String(info.st_mode & 0o7777, radix: 8))\(hasACL(fd) ? ", with an ACL" : ""))"
                + ". A member's list file must lie where they may read it themselves."
        }
        return nil
    }

    /// Whether the open file carries a POSIX access ACL beyond its mode bits. fgetxattr(2) is
    /// looked up at run time because Glibc's Swift module does not export <sys/xattr.h>.
    private static func hasACL(_ fd: Int32) -> Bool {
        guard let call = getxattr.function else { return false }
        return call(fd, "system.posix_acl_access", nil, 0) > 0
    }

    private typealias FGetXattr = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    private struct Lookup: @unchecked Sendable {
        let function: FGetXattr?
    }
    private static let getxattr: Lookup = {
        // RTLD_DEFAULT is the null handle on glibc.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fgetxattr") else { return Lookup(function: nil) }
        return Lookup(function: unsafeBitCast(symbol, to: FGetXattr.self))
    }()
}
