import Logging
import Sinkhole

/// Builds the policy from the configured lists. Start-up errors are fatal; on reload the old
/// policy stays and the error is logged (ARCHITECTURE.md principle 5).
public struct PolicyLoader: Sendable {
    public let blocklistPath: String?
    public let logger: Logger

    public init(blocklistPath: String?, logger: Logger) {
        self.blocklistPath = blocklistPath
        self.logger = logger
    }

    public func load() throws -> any QueryPolicy {
        guard let blocklistPath else { return AllowAllPolicy() }
        let list = try PlainDomainList.load(path: blocklistPath)
        var blocked = DomainSuffixSet()
        for domain in list.domains { try blocked.insert(domain) }
        for error in list.badLines.prefix(10) {
            logger.warning("skipped a line of the blocklist", metadata: ["list.source": "\(error.path)", "list.line": "\(error.line)", "reason": "\(error.reason)"])
        }
        logger.info("blocklist loaded", metadata: ["list.source": "\(blocklistPath)", "list.domains": "\(blocked.count)", "list.bad_lines": "\(list.badLines.count)"])
        return BlocklistPolicy(blocked: blocked)
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
