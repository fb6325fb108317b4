import Logging
import Sinkhole

/// Builds the policy from the configured lists. Start-up errors are fatal; on reload the old
/// policy stays and the error is logged (ARCHITECTURE.md principle 5).
public struct PolicyLoader: Sendable {
    public let blocklistPath: String?
    public let managedListPath: String?
    public let managedTTLCap: UInt32
    public let logger: Logger

    public init(blocklistPath: String?, managedListPath: String? = nil, managedTTLCap: UInt32 = 60, logger: Logger) {
        self.blocklistPath = blocklistPath
        self.managedListPath = managedListPath
        self.managedTTLCap = managedTTLCap
        self.logger = logger
    }

    public func load() throws -> any QueryPolicy {
        guard blocklistPath != nil || managedListPath != nil else { return AllowAllPolicy() }
        return BlocklistPolicy(
            blocked: try loadSet(blocklistPath), managed: try loadSet(managedListPath), managedTTLCap: managedTTLCap)
    }

    private func loadSet(_ path: String?) throws -> DomainSuffixSet {
        guard let path else { return DomainSuffixSet() }
        let list = try PlainDomainList.load(path: path)
        var set = DomainSuffixSet()
        for domain in list.domains { try set.insert(domain) }
        for error in list.badLines.prefix(10) {
            logger.warning("skipped a line of a list", metadata: ["list.source": "\(error.path)", "list.line": "\(error.line)", "reason": "\(error.reason)"])
        }
        logger.info("list loaded", metadata: ["list.source": "\(path)", "list.domains": "\(set.count)", "list.bad_lines": "\(list.badLines.count)"])
        return set
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
