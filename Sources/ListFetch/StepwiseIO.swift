#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The large file operations of a list refresh, cut into steps of `step` bytes, each its own
/// system call (SPEC §9.10).
///
/// Why: this kernel is built PREEMPT_NONE, so a thread inside a system call keeps its core until
/// the call returns to user space, whatever its scheduling class, and an event loop woken on that
/// core waits as long. Measured per call in thread CPU time on a 30 MB copy (ext4): one fsync
/// 3.3–5.4 ms, a rename over the cached old copy 2.9–3.8 ms (the old inode's page cache freed in
/// one go). In steps of 512 KiB each call took 70–250 µs, and every return to user space is a
/// point where the woken loop takes the core: at once from a refresh's SCHED_IDLE thread, and from
/// a normal-priority caller (`lists add`) when the scheduler's wakeup preemption picks the loop.
enum StepwiseIO {
    /// 512 KiB: within the 256 KiB–1 MiB the wake-up probe showed to keep a woken thread's delay
    /// near its floor (`bench/wakeup.sh`), and still few calls for a 30 MB copy (60).
    static let step = 512 << 10

    /// Starts writeback of a file as it grows, one step at a time, so the final fsync has almost
    /// nothing left to write (the copy's fsync then took 0.2 ms of CPU instead of 3–5 ms). The
    /// fsync stays: durability is unchanged, the copy is on disk before it is renamed into place.
    ///
    /// Each full step is handed to writeback (`SYNC_FILE_RANGE_WRITE`) and the step before it is
    /// waited for, so at most two steps and the partly written one are dirty or under writeback at
    /// any time, whatever the download's speed against the disk's. The wait sleeps off the CPU.
    ///
    /// A wait reports a write error of the disk and uses it up: Linux advances the descriptor's
    /// error cursor (`file_fdatawait_range`), so a later fsync on it returns 0 for that error.
    /// The first such error is kept in `error`, and every caller fails the file on it, or a copy
    /// whose bytes never reached the disk would be renamed into place as if durable.
    struct Writeback {
        let fileDescriptor: Int32
        /// `[0, started)` has been handed to writeback.
        private(set) var started: Int64 = 0
        /// The first write error a wait reported (an errno), else 0.
        private(set) var error: Int32 = 0

        init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

        /// Call after the file's bytes `[0, end)` are written.
        mutating func wrote(upTo end: Int64) {
            let step = Int64(StepwiseIO.step)
            while end - started >= step {
                if started >= step {
                    let failed = syncRange(fileDescriptor, offset: started - step, length: step, flags: flagWaitBefore | flagWrite | flagWaitAfter)
                    if error == 0, failed != 0 { error = failed }
                }
                syncRange(fileDescriptor, offset: started, length: step, flags: flagWrite)
                started += step
            }
        }
    }

    /// write(2) of all of `bytes` in steps, starting writeback as it goes, into a file written from
    /// offset 0 (freshly created or truncated). Returns 0 or the errno.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, writeback: inout Writeback) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let n = posixWrite(fd, base + offset, min(step, bytes.count - offset))
            if n < 0 {
                if lastErrno() == EINTR { continue }
                return lastErrno()
            }
            offset += n
            writeback.wrote(upTo: Int64(offset))
        }
        return writeback.error
    }

    /// fsync(2) of a file whose pages may all still be dirty (written by someone else), after
    /// handing them to writeback in steps. Returns 0 or the errno of a write error (`Writeback`)
    /// or of fsync.
    static func flush(_ fd: Int32) -> Int32 {
        var info = stat()
        var writeback = Writeback(fileDescriptor: fd)
        if fstat(fd, &info) == 0 { writeback.wrote(upTo: Int64(info.st_size)) }
        let synced = fsync(fd) == 0 ? 0 : lastErrno()
        return writeback.error != 0 ? writeback.error : synced
    }

    /// Drops the clean cached pages of `path` a step at a time (`POSIX_FADV_DONTNEED`), so the
    /// rename or unlink that ends its last link has no page cache to free in one go. The content
    /// is untouched: a reader that has it open reads it from disk. Missing file: nothing to do.
    static func dropCachedPages(of path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        var offset: Int64 = 0
        while offset < Int64(info.st_size) {
            _ = posix_fadvise(fd, off_t(offset), off_t(step), POSIX_FADV_DONTNEED)
            offset += Int64(step)
        }
    }

    /// Deletes a temporary file nobody else reads: emptied in steps (`shrink`), then unlinked.
    /// Only for files of this process that no reader has open: a copy in force is never truncated.
    static func discard(_ path: String) {
        shrink(path)
        unlink(path)
    }

    /// Truncates a file nobody else reads to nothing from the end, a step at a time: each
    /// ftruncate frees that step's pages, dirty or not, and its blocks, where one O_TRUNC or
    /// unlink would free them all in one call. Missing or not a regular file: nothing to do.
    static func shrink(_ path: String) {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        var size = Int64(info.st_size)
        while size > 0 {
            size = max(0, size - Int64(step))
            if ftruncate(fd, off_t(size)) != 0 { return }
        }
    }

    static let flagWaitBefore: UInt32 = 1 // SYNC_FILE_RANGE_WAIT_BEFORE (linux/fs.h, stable ABI)
    static let flagWrite: UInt32 = 2 // SYNC_FILE_RANGE_WRITE
    static let flagWaitAfter: UInt32 = 4 // SYNC_FILE_RANGE_WAIT_AFTER

    /// sync_file_range(2), looked up at run time because Glibc's Swift module does not export it.
    /// Returns 0 or the errno of a write error. A file that cannot take it (EINVAL, ESPIPE, no
    /// such call) is no error: starting writeback early only spreads the work. A write error must
    /// not be dropped when the flags wait: the wait used it up, and the fsync that follows will
    /// not report it again (`Writeback`). Elsewhere than Linux it does nothing.
    @discardableResult
    static func syncRange(_ fd: Int32, offset: Int64, length: Int64, flags: UInt32) -> Int32 {
        #if os(Linux)
        guard let call = syncFileRange.function else { return 0 }
        guard call(fd, offset, length, flags) != 0 else { return 0 }
        let code = lastErrno()
        return code == EINVAL || code == ESPIPE || code == ENOSYS || code == EINTR ? 0 : code
        #else
        return 0
        #endif
    }

    #if os(Linux)
    private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
    private struct Lookup: @unchecked Sendable {
        let function: SyncFileRange?
    }
    private static let syncFileRange: Lookup = {
        // RTLD_DEFAULT is the null handle on glibc.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return Lookup(function: nil) }
        return Lookup(function: unsafeBitCast(symbol, to: SyncFileRange.self))
    }()
    #endif
}

/// Writing a whole file from user space in steps, for files the helper writes itself beside the
/// store (the held names of a list, `ListDropper`): each step its own write(2), writeback started
/// as it goes, then fsynced (see `StepwiseIO`).
public enum StepwiseFile {
    /// Writes `text` to `path` (created mode 0600 or truncated) and fsyncs it.
    public static func write(_ text: String, to path: String) throws(ListFetchError) {
        var text = text
        let failure: ListFetchError? = text.withUTF8 { write(UnsafeRawBufferPointer($0), to: path) }
        if let failure { throw failure }
    }

    /// Writes `bytes` to `path` (created mode 0600 or truncated) and fsyncs it.
    public static func write(_ bytes: [UInt8], to path: String) throws(ListFetchError) {
        let failure: ListFetchError? = bytes.withUnsafeBytes { write($0, to: path) }
        if let failure { throw failure }
    }

    static func write(_ bytes: UnsafeRawBufferPointer, to path: String) -> ListFetchError? {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .localFile(path: path, operation: "open for writing", errno: lastErrno()) }
        defer { close(fd) }
        var writeback = StepwiseIO.Writeback(fileDescriptor: fd)
        let writeError = StepwiseIO.writeAll(bytes, to: fd, writeback: &writeback)
        guard writeError == 0 else { return .localFile(path: path, operation: "write", errno: writeError) }
        guard fsync(fd) == 0 else { return .localFile(path: path, operation: "flush", errno: lastErrno()) }
        return nil
    }
}
