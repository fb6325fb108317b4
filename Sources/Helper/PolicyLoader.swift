import DomainLists
import Foundation
import Logging
import ScrollOffCore
import Sinkhole
import Synchronization

/// Builds the diagnostic policy of the hidden `--blocklist` and `--managed-list` flags (tests and
/// benchmarks), which `PolicyComposer` lays over the engine's rules. Start-up errors are fatal; on
/// reload the old policy stays and the error is logged (ARCHITECTURE.md principle 5).
///
/// Its rules are fixed: entry `blocklist` (the `--blocklist` file) blocked around the clock, and
/// entry `managed` (`--managed-list`) opened by a grant from start-up for `managedTTLCap` seconds,
/// after which it is blocked too. Both go through the same matcher and snapshot types as the
/// engine's entries, so the benchmarks measure the production lookup.
public final class PolicyLoader: Sendable {
    public let blocklistPath: String?
    public let managedListPath: String?
    public let managedTTLCap: UInt32
    public let logger: Logger
    /// The clock of the fixed grant above; these lists carry no schedule for the trusted clock to guard.
    public let clock: @Sendable () -> Instant
    let startedAt: Instant
    static let catalog: [EntryID] = ["blocklist", "managed"]
    /// The lists last loaded, kept so that a refresh at a window edge needs no file access.
    private let loaded = Mutex<DomainMatcher?>(nil)

    public init(
        blocklistPath: String?, managedListPath: String? = nil, managedTTLCap: UInt32 = 60, logger: Logger,
        clock: @escaping @Sendable () -> Instant = PolicyLoader.wallClock
    ) {
        self.blocklistPath = blocklistPath
        self.managedListPath = managedListPath
        self.managedTTLCap = max(managedTTLCap, 1)
        self.logger = logger
        self.clock = clock
        startedAt = clock()
    }

    /// The wall clock through the program's one real clock (`SystemTimeSource`, ARCHITECTURE.md
    /// principle 11).
    public static let wallClock: @Sendable () -> Instant = { timeSource.read().wall }
    /// Built once: it reads the boot id from /proc, which no query should pay for.
    static let timeSource = SystemTimeSource()

    var rules: ProfileRules {
        ProfileRules(
            blocks: [
                Block(entry: "blocklist", created: startedAt, cooldownUntil: startedAt),
                Block(entry: "managed", created: startedAt, cooldownUntil: startedAt),
            ],
            grants: [
                Grant(id: 1, entry: "managed", kind: .spend, start: startedAt, end: startedAt + .seconds(Int64(managedTTLCap))),
            ])
    }

    /// Reads the lists and returns the policy in force now.
    public func load() throws -> any QueryPolicy {
        var builder = MatcherBuilder()
        if let path = blocklistPath { try add(path, entry: 0, to: &builder) }
        if let path = managedListPath { try add(path, entry: 1, to: &builder) }
        let matcher = builder.build()
        loaded.withLock { $0 = matcher }
        #if os(Linux)
        // Building a million-name matcher leaves tens of MiB of freed builder memory in malloc's
        // arenas; hand it back so the resident size is the matcher's, not the build's peak.
        _ = glibcMallocTrim(0)
        #endif
        return policy(matcher: matcher)
    }

    /// The policy over the lists already loaded, re-evaluated at the current time: called at every
    /// window edge (`EnforcementSnapshot.validUntil`) so decisions and TTL caps stay exact.
    public func refreshed() -> (any QueryPolicy)? {
        loaded.withLock { $0 }.map { policy(matcher: $0) }
    }

    private func policy(matcher: DomainMatcher) -> SnapshotPolicy {
        let now = clock()
        let entrySets = matcher.entrySets.map { set in set.map(\.rawValue) }
        let snapshot = EnforcementSnapshot(entrySets: entrySets, entries: Self.catalog, profiles: [rules], builtAt: now)
        return SnapshotPolicy(matcher: matcher, snapshot: snapshot, now: clock)
    }

    private func add(_ path: String, entry: UInt32, to builder: inout MatcherBuilder) throws {
        let parsed: ParsedList
        do {
            parsed = try ListParser.parse(contentsOfFile: path)
        } catch .noRules {
            logger.info("list loaded", metadata: ["list.source": "\(path)", "list.rules": "0"])
            return
        } catch {
            throw HelperStartError("cannot load the list \(path): \(error)")
        }
        for bad in parsed.badLines.prefix(10) {
            logger.warning("skipped a line of a list", metadata: ["list.source": "\(path)", "list.line": "\(bad.lineNumber)", "reason": "\(bad.reason)"])
        }
        builder.add(parsed.rules, entry: DomainLists.EntryIndex(entry))
        logger.info("list loaded", metadata: ["list.source": "\(path)", "list.bad_lines": "\(parsed.badLineCount)"])
    }

    /// Rereads the lists into `store`; keeps the current policy when that fails.
    public func reload(into store: PolicyStore) {
        do {
            store.replace(with: try load())
        } catch {
            logger.error("reload failed; the previous rules stay in force", metadata: ["reason": "\(error)"])
        }
    }
}

#if os(Linux)
/// glibc's `malloc_trim(3)`, which the Glibc module map does not export (it lives in malloc.h).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
