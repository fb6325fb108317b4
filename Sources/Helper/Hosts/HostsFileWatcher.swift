import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Wakes hosts mode when someone else changes the hosts file (SPEC §10 "restored if someone edits
/// it"), through inotify(7) on its folder: an editor that saves by renaming a new file over the old
/// one replaces the inode, so a watch on the file itself would go deaf after the first save.
///
/// It only says "look again": the service compares the file with what the rules want and writes only
/// if they differ, so the helper's own renames wake it once and change nothing.
///
/// It says so only once the file has been quiet for ``quiet``: a wake that lands while someone
/// writes the file in place (truncate, then write) would read it half-written and rename the
/// section over the inode they are still writing, and their change would be lost. Every event,
/// writes (IN_MODIFY) included, pushes the wake back, so the service reads the file as last written.
///
/// `@unchecked Sendable`: the source is set up in `init` and afterwards only cancelled, which
/// Dispatch allows from any thread.
final class HostsFileWatcher: @unchecked Sendable {
    /// How long the file must go without a change before the service looks at it.
    static let quiet = DispatchTimeInterval.milliseconds(200)

    /// The one wake waiting for the file to go quiet; touched only on `queue`.
    private final class QuietWake: @unchecked Sendable {
        let queue: DispatchQueue
        var pending: DispatchWorkItem?
        init(queue: DispatchQueue) { self.queue = queue }

        /// Called on `queue`: replaces the waiting wake with one `quiet` from now.
        func push(_ changed: @escaping @Sendable () -> Void) {
            pending?.cancel()
            let wake = DispatchWorkItem(block: changed)
            pending = wake
            queue.asyncAfter(deadline: .now() + HostsFileWatcher.quiet, execute: wake)
        }

        func cancel() { queue.sync { pending?.cancel() } }
    }

    private let source: any DispatchSourceRead
    private let wake: QuietWake

    /// Nil when inotify is not available (the 30 s check still restores the section).
    init?(path: String, queue: DispatchQueue = DispatchQueue(label: "scrolloff.hosts-watch"), changed: @escaping @Sendable () -> Void) {
        let folder = (path as NSString).deletingLastPathComponent
        let name = Array((path as NSString).lastPathComponent.utf8)
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        // Whole changes (a close after writing, a rename, a delete) and writes, which only push the
        // wake back (see ``quiet``).
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_MODIFY)
        guard inotify_add_watch(fd, folder.isEmpty ? "." : folder, mask) >= 0 else {
            close(fd)
            return nil
        }
        let wake = QuietWake(queue: queue)
        self.wake = wake
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var touched = false
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                touched = touched || Self.names(in: buffer[0..<n]).contains(name)
            }
            if touched { wake.push(changed) }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    func stop() {
        source.cancel()
        wake.cancel()
    }

    /// The file names of the events in one read: a 16-byte header (wd, mask, cookie, len), then
    /// `len` bytes of NUL-padded name (inotify(7)).
    static func names(in bytes: ArraySlice<UInt8>) -> [[UInt8]] {
        var names: [[UInt8]] = []
        var i = bytes.startIndex
        while i + 16 <= bytes.endIndex {
            let len = Int(bytes[i + 12]) | Int(bytes[i + 13]) << 8 | Int(bytes[i + 14]) << 16 | Int(bytes[i + 15]) << 24
            let start = i + 16, end = min(start + len, bytes.endIndex)
            names.append(Array(bytes[start..<end].prefix { $0 != 0 }))
            i = start + len
        }
        return names
    }
}
