import DomainLists
import Foundation
import NIOConcurrencyHelpers

/// The rules the list store's validator parsed from a downloaded copy, handed on to the code that
/// puts the copy in force, so a list is parsed once per download instead of three times
/// (validation, the held-names diff, `HelperEngine.parseLists`; SPEC §9: a 1,000,000-name list
/// took 4.8 s to come into force, most of it parsing).
///
/// A copy is known by its file's identity (device, inode, size, modification time), which the
/// store's rename from the temporary file into place keeps; a file changed since (or another file)
/// is simply parsed again, by the same parser with the same budget, so this can never put
/// different rules in force than parsing would. `take` hands a copy's rules over and forgets them:
/// nothing here outlives the publish. At most `capacity` copies wait (a validated copy the store
/// then discarded, say a cancelled refresh), the oldest dropped first, so a forgotten one costs
/// one list's rules until the next download, never more.
public final class ParsedCopies: Sendable {
    private struct Entry {
        var identity: FileIdentity
        var rules: RuleList
    }

    private let entries = NIOLockedValueBox<[Entry]>([])
    private let capacity: Int

    public init(capacity: Int = 2) { self.capacity = max(1, capacity) }

    /// Remembers the rules parsed from the file at `path` (call right after a successful parse).
    public func keep(_ rules: RuleList, parsedFrom path: String) {
        guard let identity = FileIdentity(path: path) else { return }
        entries.withLockedValue { entries in
            entries.removeAll { $0.identity == identity }
            entries.append(Entry(identity: identity, rules: rules))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }

    /// The rules kept for the file now at `path`, without forgetting them (the held-names diff
    /// reads the new copy before it is put in force).
    public func peek(_ path: String) -> RuleList? {
        guard let identity = FileIdentity(path: path) else { return nil }
        return entries.withLockedValue { entries in entries.first { $0.identity == identity }?.rules }
    }

    /// The rules kept for the file now at `path`, forgotten here (the caller puts them in force).
    public func take(_ path: String) -> RuleList? {
        guard let identity = FileIdentity(path: path) else { return nil }
        return entries.withLockedValue { entries in
            guard let i = entries.firstIndex(where: { $0.identity == identity }) else { return nil }
            return entries.remove(at: i).rules
        }
    }

    /// How many copies wait to be taken (tests).
    public var waiting: Int { entries.withLockedValue { $0.count } }
}

/// What tells one stored file from another and from a later version of itself: a rename keeps it,
/// a rewrite changes the modification time or the size, a new file the inode.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}
