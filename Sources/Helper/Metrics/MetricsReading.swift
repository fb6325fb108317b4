import ControlServer
import Enforcement
import Engine
import Firewall
import PostgresStore
import ScrollOffCore
import Sinkhole

/// Everything one scrape reports, read from the running parts before any text is written.
/// Plain values, so the exposition can be built and tested without a running helper.
public struct MetricsReading: Sendable {
    public struct List: Sendable, Equatable {
        public var name: String
        /// Domains (rules) in the copy in force; nil before the first good download.
        public var domains: Int?
        /// Seconds since the last good download; nil when there was none.
        public var ageSeconds: Double?

        public init(name: String, domains: Int?, ageSeconds: Double?) {
            self.name = name
            self.domains = domains
            self.ageSeconds = ageSeconds
        }
    }

    public var queries: QueryTotals
    public var upstreams: [UpstreamStatus]
    public var cacheEntries: Int
    public var lists: [List]
    /// Entries opened by a running grant (spend, peek, token; SPEC §4), per profile name.
    public var grantsActive: [(profile: String, count: Int)]
    /// Expired answers given because every upstream failed (RFC 8767), since start.
    public var staleAnswers: UInt64
    /// Datagrams on the forwarder's query ports that were not the awaited reply, since start.
    public var unwantedReplies: UInt64
    /// UDP exchanges given up as possibly spoofed and asked again over TCP, since start.
    public var spoofingRetries: UInt64
    /// Packets the firewall's table counted since start, by counter name (`dns_redirected`,
    /// `dns_refused`, `dot_refused`, `doh_refused`, `resolver_refused`); empty while the firewall is off (SPEC §9b).
    public var firewallAttempts: [String: UInt64] = [:]
    /// Attempts per device address, then kind (`dns`, `dot`, `doh`, `resolver`); empty while the firewall is off.
    public var firewallClientAttempts: [String: [String: UInt64]] = [:]
    /// The shared store's round trips (`[store] backend = "postgresql"`); nil with SQLite.
    public var store: StoreTotals?
    /// The live event feed's readers (the event stream, the page's live view) and the urges waiting for their batch.
    public var eventStream = EventStreamTotals()

    /// The live event feed (`EventFeed`, SPEC §12) now and since start.
    public struct EventStreamTotals: Sendable, Equatable {
        /// Readers following the feed now.
        public var readers: Int
        /// Events written to readers since start.
        public var eventsSent: UInt64
        /// Readers let go for falling behind since start.
        public var readersDropped: UInt64
        /// Items the slowest reader has queued and not yet taken (it is let go at `EventFeed.defaultBuffer`).
        public var deepestQueue: Int
        /// Urges recorded by the DNS path and not yet written (each batch within 250 ms).
        public var urgesPending: Int

        public init(readers: Int = 0, eventsSent: UInt64 = 0, readersDropped: UInt64 = 0, deepestQueue: Int = 0, urgesPending: Int = 0) {
            self.readers = readers
            self.eventsSent = eventsSent
            self.readersDropped = readersDropped
            self.deepestQueue = deepestQueue
            self.urgesPending = urgesPending
        }
    }

    /// Totals since start of the household database's use.
    public struct StoreTotals: Sendable, Equatable {
        public var roundTrips: UInt64
        public var failures: UInt64
        public var staleCommits: UInt64
        public var notifications: UInt64
        /// From the other helper's commit to this one's notification, the last one seen.
        public var lastNotifyLagSeconds: Double?
        /// The listener's LISTEN connection lost (closed, killed, its probe not back), and opened again after.
        public var listenerFailures: UInt64
        public var listenerReconnects: UInt64

        public init(roundTrips: UInt64, failures: UInt64, staleCommits: UInt64, notifications: UInt64, lastNotifyLagSeconds: Double?,
                    listenerFailures: UInt64 = 0, listenerReconnects: UInt64 = 0) {
            self.listenerFailures = listenerFailures
            self.listenerReconnects = listenerReconnects
            self.roundTrips = roundTrips
            self.failures = failures
            self.staleCommits = staleCommits
            self.notifications = notifications
            self.lastNotifyLagSeconds = lastNotifyLagSeconds
        }
    }

    public init(
        queries: QueryTotals, upstreams: [UpstreamStatus], cacheEntries: Int, lists: [List],
        grantsActive: [(profile: String, count: Int)], staleAnswers: UInt64 = 0, unwantedReplies: UInt64 = 0,
        spoofingRetries: UInt64 = 0
    ) {
        self.staleAnswers = staleAnswers
        self.unwantedReplies = unwantedReplies
        self.spoofingRetries = spoofingRetries
        self.queries = queries
        self.upstreams = upstreams
        self.cacheEntries = cacheEntries
        self.lists = lists
        self.grantsActive = grantsActive
    }
}

/// Where a scrape reads from: the parts `HelperMain` built. Each read is cheap or off the DNS path.
public struct MetricsSources: Sendable {
    public var counters: QueryCounters
    public var forwarder: Forwarder
    public var cache: AnswerCache
    public var lists: ListsController
    public var engine: HelperEngine
    /// The nftables table's counters (SPEC §9b); nil when none was built.
    public var firewall: FirewallController?
    /// The household's shared store; nil with SQLite.
    public var sharedStore: PostgresStateStore?

    public init(counters: QueryCounters, forwarder: Forwarder, cache: AnswerCache, lists: ListsController, engine: HelperEngine) {
        self.counters = counters
        self.forwarder = forwarder
        self.cache = cache
        self.lists = lists
        self.engine = engine
    }

    public func read() async -> MetricsReading {
        let enforcement = engine.box.enforcement
        // The engine's trusted clock (SPEC §11), the one the list refresh plan uses too.
        let now = enforcement.now()
        let lists = await lists.store.allMetadata().map { meta in
            MetricsReading.List(
                name: meta.name.rawValue, domains: meta.hasCopy ? meta.entryCount : nil,
                ageSeconds: meta.lastSuccess.map { Double((now - $0).milliseconds) / 1000 })
        }
        let grants = enforcement.states.enumerated().map { index, state in
            let open = state.entries.count { status in
                if case .open(let until) = status.state { return until > now }
                return false
            }
            let name = index < enforcement.profileNames.count ? enforcement.profileNames[index] : "profile-\(index)"
            return (profile: name, count: open)
        }
        let spoofing = forwarder.spoofingStatistics
        var firewallAttempts: [String: UInt64] = [:]
        var firewallClientAttempts: [String: [String: UInt64]] = [:]
        if let firewall, await firewall.isEnabled {
            firewallAttempts = await firewall.counters()
            firewallClientAttempts = await firewall.clientAttempts()
        }
        var reading = MetricsReading(
            queries: counters.totals(), upstreams: forwarder.upstreamStatuses(), cacheEntries: cache.count,
            lists: lists.sorted { $0.name < $1.name }, grantsActive: grants, staleAnswers: cache.staleAnswers,
            unwantedReplies: spoofing.unwantedReplies, spoofingRetries: spoofing.tcpRetries)
        reading.firewallAttempts = firewallAttempts
        reading.firewallClientAttempts = firewallClientAttempts
        let feed = engine.eventFeed
        reading.eventStream = MetricsReading.EventStreamTotals(
            readers: feed.readerCount, eventsSent: UInt64(feed.sentEvents), readersDropped: UInt64(feed.droppedReaders),
            deepestQueue: feed.deepestQueue, urgesPending: engine.urges.pendingCount)
        if let c = sharedStore?.counters {
            reading.store = MetricsReading.StoreTotals(
                roundTrips: UInt64(c.roundTrips), failures: UInt64(c.failures), staleCommits: UInt64(c.staleCommits),
                notifications: UInt64(c.notifications), lastNotifyLagSeconds: c.lastNotifyLagMilliseconds.map { Double($0) / 1000 },
                listenerFailures: UInt64(c.listenerFailures), listenerReconnects: UInt64(c.listenerReconnects))
        }
        return reading
    }
}
