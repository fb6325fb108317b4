import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Wakes hosts mode when someone else changes the hosts file (SPEC §10 "restored if someone edits
/// it"), through inotify(7) on its folder and on the file itself. The folder's watch sees an editor
/// that saves by renaming a new file over the old one (a new inode, which a watch on the file alone
/// would miss after the first save). The file's own watch sees writes to a bind-mounted file (a
/// container's /etc/hosts, the end-to-end tests' namespace): those arrive through the path of the
/// file's real folder, so the watched folder hears nothing. The file's watch is renewed after every
/// wake, so it follows the file to its new inode.
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
        let folderWatch = inotify_add_watch(fd, folder.isEmpty ? "." : folder, mask)
        guard folderWatch >= 0 else {
            close(fd)
            return nil
        }
        // Best effort: the file may be missing for a moment (an editor's delete-then-write).
        _ = inotify_add_watch(fd, path, mask)
        let wake = QuietWake(queue: queue)
        self.wake = wake
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var touched = false
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                // The folder's events name a file; the file's own watch (any other wd) is the file.
                touched = touched || Self.events(in: buffer[0..<n]).contains { $0.watch != folderWatch || $0.name == name }
            }
            if touched {
                _ = inotify_add_watch(fd, path, mask)
                wake.push(changed)
            }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    func stop() {
        source.cancel()
        wake.cancel()
    }

    /// The watch and file name of each event in one read: a 16-byte header (wd, mask, cookie, len),
    /// then `len` bytes of NUL-padded name (inotify(7)); a watch on a file itself has no name.
    static func events(in bytes: ArraySlice<UInt8>) -> [(watch: Int32, name: [UInt8])] {
        var events: [(watch: Int32, name: [UInt8])] = []
        var i = bytes.startIndex
        func word(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        while i + 16 <= bytes.endIndex {
            let watch = Int32(truncatingIfNeeded: word(i))
            let len = word(i + 12)
            let start = i + 16, end = min(start + len, bytes.endIndex)
            events.append((watch, Array(bytes[start..<end].prefix { $0 != 0 })))
            i = start + len
        }
        return events
    }
}
