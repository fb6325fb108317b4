import Logging
import NIOCore
import Sinkhole

/// What `scrolloff-dns start` was asked to do, after flags and defaults are combined.
public struct HelperConfiguration: Sendable {
    public var paths: RuntimePaths
    public var listen: [HostPort]
    public var upstreams: [HostPort]
    public var blockingMode: BlockingMode
    /// The curated catalog folder (`--catalog`); nil = found by `CatalogLocation`.
    public var catalogPath: String?
    /// A plain list of domains to block with their subdomains, for diagnostics and tests, on top of
    /// the rules; reread on SIGHUP.
    public var blocklistPath: String?
    /// Names treated as managed and open, with their TTL cap: a test hook for TTL capping.
    public var managedListPath: String?
    public var managedTTLCap: UInt32 = 60
    /// Known DoH endpoints to block (SPEC §9, optional).
    public var dohEndpointsPath: String?
    public var eventLoops: Int
    public var forwarder: ForwarderTimeouts
    public var cache: CacheConfiguration

    public struct ForwarderTimeouts: Sendable {
        public var perUpstream: TimeAmount
        public var overall: TimeAmount
        public init(perUpstream: TimeAmount = .seconds(2), overall: TimeAmount = .seconds(4)) {
            self.perUpstream = perUpstream
            self.overall = overall
        }
    }

    public init(
        paths: RuntimePaths, listen: [HostPort], upstreams: [HostPort], blockingMode: BlockingMode = .null,
        blocklistPath: String? = nil, dohEndpointsPath: String? = nil, eventLoops: Int = System.coreCount,
        forwarder: ForwarderTimeouts = ForwarderTimeouts(), cache: CacheConfiguration = CacheConfiguration()
    ) {
        self.paths = paths
        self.listen = listen
        self.upstreams = upstreams
        self.blockingMode = blockingMode
        self.blocklistPath = blocklistPath
        self.dohEndpointsPath = dohEndpointsPath
        self.eventLoops = max(eventLoops, 1)
        self.forwarder = forwarder
        self.cache = cache
    }
}

/// Start-up failed; the message says what to change.
public struct HelperStartError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
