import Prometheus
import Sinkhole
import Synchronization

/// Turns readings into the Prometheus text exposition format (version 0.0.4).
///
/// Counters, gauges and their label sets live in a swift-prometheus registry, updated from each
/// reading. The latency histogram is the exception: swift-prometheus's `Histogram.record` takes a
/// lock per observation, which the DNS path must not do, so the per-loop buckets are summed by the
/// scrape and written here in the same format (`_bucket{le=…}`, `_sum`, `_count`).
public final class MetricsExposition: Sendable {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private struct State {
        var reported = QueryTotals(outcomes: [], buckets: [], sumNanoseconds: 0)
        /// The upstream set of the last scrape, in the forwarder's order, and each one's series.
        var upstreamOrder: [String] = []
        var upstreamSeries: [String: UpstreamSeries] = [:]
        var listGauges: [String: (domains: Gauge?, age: Gauge?)] = [:]
        var grantGauges: [String: Gauge] = [:]
        /// Totals already added to the counters of the same name.
        var staleAnswers: UInt64 = 0
        var unwantedReplies: UInt64 = 0
        var spoofingRetries: UInt64 = 0
        /// The firewall's counters, made at the first scrape that has them, and what each reported.
        var firewallSeries: [String: (counter: Counter, reported: UInt64)] = [:]
        /// Per device and kind ("client kind" as key), likewise.
        var firewallClientSeries: [String: (counter: Counter, reported: UInt64)] = [:]
        /// The shared store's series, made at the first scrape that has them, and what each reported.
        var storeSeries: StoreSeries?
        /// The event feed's totals already added to its counters.
        var eventsSent: UInt64 = 0
        var readersDropped: UInt64 = 0
    }

    private struct StoreSeries {
        var roundTrips: (counter: Counter, reported: UInt64)
        var failures: (counter: Counter, reported: UInt64)
        var staleCommits: (counter: Counter, reported: UInt64)
        var notifications: (counter: Counter, reported: UInt64)
        var listenerFailures: (counter: Counter, reported: UInt64)
        var listenerReconnects: (counter: Counter, reported: UInt64)
        let notifyLag: Gauge
    }

    /// One upstream's series, and the forwarder's failure total already added to its counter.
    private struct UpstreamSeries {
        let up: Gauge
        let consecutiveFailures: Gauge
        let failures: Counter
        var reportedFailures: UInt64
    }

    private let registry = PrometheusCollectorRegistry()
    private let queries: [Counter]
    private let cacheEntries: Gauge
    private let staleAnswers: Counter
    private let unwantedReplies: Counter
    private let spoofingRetries: Counter
    private let streamReaders: Gauge
    private let streamEventsSent: Counter
    private let streamReadersDropped: Counter
    private let streamQueueDepth: Gauge
    private let urgesPending: Gauge
    private let version: String
    private let state = Mutex(State())

    public init(version: String) {
        self.version = version
        let registry = registry
        queries = QueryOutcome.allCases.map { outcome in
            registry.makeCounter(descriptor: Names.queries, labels: [("result", outcome.label)])
        }
        cacheEntries = registry.makeGauge(descriptor: Names.cacheEntries)
        staleAnswers = registry.makeCounter(descriptor: Names.staleAnswers)
        unwantedReplies = registry.makeCounter(descriptor: Names.unwantedReplies)
        spoofingRetries = registry.makeCounter(descriptor: Names.spoofingRetries)
        streamReaders = registry.makeGauge(descriptor: Names.streamReaders)
        streamEventsSent = registry.makeCounter(descriptor: Names.streamEventsSent)
        streamReadersDropped = registry.makeCounter(descriptor: Names.streamReadersDropped)
        streamQueueDepth = registry.makeGauge(descriptor: Names.streamQueueDepth)
        urgesPending = registry.makeGauge(descriptor: Names.urgesPending)
        registry.makeGauge(descriptor: Names.buildInfo, labels: [("version", version)]).set(to: 1)
    }

    /// The text for one scrape. Scrapes are serialized here so counter deltas are applied once.
    public func render(_ reading: MetricsReading) -> [UInt8] {
        state.withLock { state in
            update(&state, with: reading)
            var buffer: [UInt8] = []
            buffer.reserveCapacity(4096)
            registry.emit(into: &buffer)
            Self.appendLatencyHistogram(reading.queries, to: &buffer)
            return buffer
        }
    }

    private func update(_ state: inout State, with reading: MetricsReading) {
        // Counters only go up: add what happened since the last scrape.
        for outcome in QueryOutcome.allCases {
            let before = state.reported.outcomes.isEmpty ? 0 : state.reported[outcome]
            let now = reading.queries[outcome]
            if now > before { queries[outcome.rawValue].increment(by: Int64(clamping: now - before)) }
        }
        state.reported = reading.queries
        cacheEntries.set(to: Double(reading.cacheEntries))
        Self.advance(staleAnswers, from: &state.staleAnswers, to: reading.staleAnswers)
        Self.advance(unwantedReplies, from: &state.unwantedReplies, to: reading.unwantedReplies)
        Self.advance(spoofingRetries, from: &state.spoofingRetries, to: reading.spoofingRetries)
        streamReaders.set(to: Double(reading.eventStream.readers))
        Self.advance(streamEventsSent, from: &state.eventsSent, to: reading.eventStream.eventsSent)
        Self.advance(streamReadersDropped, from: &state.readersDropped, to: reading.eventStream.readersDropped)
        streamQueueDepth.set(to: Double(reading.eventStream.deepestQueue))
        urgesPending.set(to: Double(reading.eventStream.urgesPending))

        for (name, total) in reading.firewallAttempts.sorted(by: { $0.key < $1.key }) {
            var series = state.firewallSeries[name]
                ?? (registry.makeCounter(descriptor: Names.firewallAttempts, labels: [("action", name)]), 0)
            Self.advance(series.counter, from: &series.reported, to: total)
            state.firewallSeries[name] = series
        }
        for (client, kinds) in reading.firewallClientAttempts.sorted(by: { $0.key < $1.key }) {
            for (kind, total) in kinds.sorted(by: { $0.key < $1.key }) {
                let key = client + " " + kind
                var series = state.firewallClientSeries[key]
                    ?? (registry.makeCounter(descriptor: Names.firewallClientAttempts, labels: [("client", client), ("kind", kind)]), 0)
                Self.advance(series.counter, from: &series.reported, to: total)
                state.firewallClientSeries[key] = series
            }
        }
        if let store = reading.store {
            var series = state.storeSeries ?? StoreSeries(
                roundTrips: (registry.makeCounter(descriptor: Names.storeRoundTrips), 0),
                failures: (registry.makeCounter(descriptor: Names.storeFailures), 0),
                staleCommits: (registry.makeCounter(descriptor: Names.storeStaleCommits), 0),
                notifications: (registry.makeCounter(descriptor: Names.storeNotifications), 0),
                listenerFailures: (registry.makeCounter(descriptor: Names.storeListenerFailures), 0),
                listenerReconnects: (registry.makeCounter(descriptor: Names.storeListenerReconnects), 0),
                notifyLag: registry.makeGauge(descriptor: Names.storeNotifyLag))
            Self.advance(series.roundTrips.counter, from: &series.roundTrips.reported, to: store.roundTrips)
            Self.advance(series.failures.counter, from: &series.failures.reported, to: store.failures)
            Self.advance(series.staleCommits.counter, from: &series.staleCommits.reported, to: store.staleCommits)
            Self.advance(series.notifications.counter, from: &series.notifications.reported, to: store.notifications)
            Self.advance(series.listenerFailures.counter, from: &series.listenerFailures.reported, to: store.listenerFailures)
            Self.advance(series.listenerReconnects.counter, from: &series.listenerReconnects.reported, to: store.listenerReconnects)
            if let lag = store.lastNotifyLagSeconds { series.notifyLag.set(to: lag) }
            state.storeSeries = series
        }
        updateUpstreams(&state, reading.upstreams)
        updateLists(&state, reading.lists)
        updateGrants(&state, reading.grantsActive)
    }

    /// Adds to `counter` what a running total gained since the last scrape.
    private static func advance(_ counter: Counter, from reported: inout UInt64, to total: UInt64) {
        if total > reported { counter.increment(by: Int64(clamping: total - reported)) }
        reported = total
    }

    /// A reload may change the upstreams. The series of one no longer configured are dropped, not
    /// left frozen at their last value. A changed set also restarts the forwarder's health, so
    /// every total starts again from 0 (`Forwarder.replace`): the baseline restarts with it and
    /// the failures counted after the reload are added at once. The counter of an upstream that
    /// stays never goes backwards; a total below its baseline without a set change (the health
    /// restarted for a changed backoff) is read the same way, as a restart.
    private func updateUpstreams(_ state: inout State, _ upstreams: [UpstreamStatus]) {
        let order = upstreams.map(\.address)
        let restarted = order != state.upstreamOrder
        for (address, series) in state.upstreamSeries where !order.contains(address) {
            registry.unregisterGauge(series.up)
            registry.unregisterGauge(series.consecutiveFailures)
            registry.unregisterCounter(series.failures)
            state.upstreamSeries[address] = nil
        }
        for upstream in upstreams {
            let labels = [("upstream", upstream.address)]
            var series = state.upstreamSeries[upstream.address] ?? UpstreamSeries(
                up: registry.makeGauge(descriptor: Names.upstreamUp, labels: labels),
                consecutiveFailures: registry.makeGauge(descriptor: Names.upstreamConsecutiveFailures, labels: labels),
                failures: registry.makeCounter(descriptor: Names.upstreamFailures, labels: labels),
                reportedFailures: 0)
            series.up.set(to: upstream.up ? 1 : 0)
            series.consecutiveFailures.set(to: Double(upstream.consecutiveFailures))
            if restarted || upstream.totalFailures < series.reportedFailures { series.reportedFailures = 0 }
            if upstream.totalFailures > series.reportedFailures {
                series.failures.increment(by: Int64(clamping: upstream.totalFailures - series.reportedFailures))
            }
            series.reportedFailures = upstream.totalFailures
            state.upstreamSeries[upstream.address] = series
        }
        state.upstreamOrder = order
    }

    /// Lists come and go at run time: a removed list's series are dropped, not left at their last value.
    private func updateLists(_ state: inout State, _ lists: [MetricsReading.List]) {
        var seen: Set<String> = []
        for list in lists {
            seen.insert(list.name)
            var gauges = state.listGauges[list.name] ?? (nil, nil)
            let labels = [("list", list.name)]
            if let domains = list.domains {
                let gauge = gauges.domains ?? registry.makeGauge(descriptor: Names.listDomains, labels: labels)
                gauge.set(to: Double(domains))
                gauges.domains = gauge
            }
            if let age = list.ageSeconds {
                let gauge = gauges.age ?? registry.makeGauge(descriptor: Names.listAge, labels: labels)
                gauge.set(to: age)
                gauges.age = gauge
            }
            state.listGauges[list.name] = gauges
        }
        for (name, gauges) in state.listGauges where !seen.contains(name) {
            if let domains = gauges.domains { registry.unregisterGauge(domains) }
            if let age = gauges.age { registry.unregisterGauge(age) }
            state.listGauges[name] = nil
        }
    }

    private func updateGrants(_ state: inout State, _ grants: [(profile: String, count: Int)]) {
        var seen: Set<String> = []
        for grant in grants {
            seen.insert(grant.profile)
            let gauge = state.grantGauges[grant.profile]
                ?? registry.makeGauge(descriptor: Names.grantsActive, labels: [("profile", grant.profile)])
            gauge.set(to: Double(grant.count))
            state.grantGauges[grant.profile] = gauge
        }
        for (profile, gauge) in state.grantGauges where !seen.contains(profile) {
            registry.unregisterGauge(gauge)
            state.grantGauges[profile] = nil
        }
    }

    /// `scrolloff_dns_query_duration_seconds`: from the packet taken in to its reply written.
    static func appendLatencyHistogram(_ totals: QueryTotals, to buffer: inout [UInt8]) {
        let name = "scrolloff_dns_query_duration_seconds"
        let help = "Time from a query's arrival to its reply, cache hits and upstream answers alike."
        buffer += Array("# HELP \(name) \(help)\n".utf8)
        buffer += Array("# TYPE \(name) histogram\n".utf8)
        var cumulative: UInt64 = 0
        for (index, bound) in QueryLatencyBuckets.upperBoundsNanoseconds.enumerated() {
            cumulative &+= index < totals.buckets.count ? totals.buckets[index] : 0
            buffer += Array("\(name)_bucket{le=\"\(seconds(bound))\"} \(cumulative)\n".utf8)
        }
        let count = totals.answered
        buffer += Array("\(name)_bucket{le=\"+Inf\"} \(count)\n".utf8)
        buffer += Array("\(name)_sum \(seconds(totals.sumNanoseconds))\n".utf8)
        buffer += Array("\(name)_count \(count)\n".utf8)
    }

    /// Nanoseconds as decimal seconds without float noise: 50000 → `0.00005`, 2e9 → `2`.
    static func seconds(_ nanoseconds: UInt64) -> String {
        let whole = nanoseconds / 1_000_000_000
        var fraction = String(nanoseconds % 1_000_000_000)
        guard fraction != "0" else { return "\(whole)" }
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)"
    }
}

/// Every series name and its help text; all start with `scrolloff_` (Prometheus naming practice).
/// Computed: swift-prometheus's descriptor is not `Sendable`, so it cannot be a stored static.
enum Names {
    static var queries: MetricNameDescriptor {
        name("dns_queries", unit: "total",
             "DNS queries by result: blocked, forwarded, cached, refused, servfail, formerr, notimp, local, dropped.")
    }
    static var cacheEntries: MetricNameDescriptor { name("cache_entries", "Answers held in the DNS cache.") }
    static var storeRoundTrips: MetricNameDescriptor {
        name("store_round_trips", unit: "total", "Statements sent to the household's PostgreSQL database ([store] backend = \"postgresql\").")
    }
    static var storeFailures: MetricNameDescriptor {
        name("store_failures", unit: "total", "Calls to the household database that failed: unreachable, timed out or refused.")
    }
    static var storeStaleCommits: MetricNameDescriptor {
        name("store_stale_commits", unit: "total", "Commits refused because another helper of the household committed first; each was decided again.")
    }
    static var storeNotifications: MetricNameDescriptor {
        name("store_notifications", unit: "total", "Changes of another helper announced by the database (LISTEN/NOTIFY).")
    }
    static var storeListenerFailures: MetricNameDescriptor {
        name("store_listener_failures", unit: "total",
             "Times this helper's LISTEN connection was lost (closed, killed, or its own probe notification not back in 3 s); changes arrived by the once-a-second check meanwhile.")
    }
    static var storeListenerReconnects: MetricNameDescriptor {
        name("store_listener_reconnects", unit: "total", "Times the LISTEN connection was opened again after such a loss.")
    }
    static var storeNotifyLag: MetricNameDescriptor {
        name("store_notify_lag", unit: "seconds", "From another helper's commit to its notification here, the last one (by the two machines' clocks).")
    }
    static var staleAnswers: MetricNameDescriptor {
        name("dns_stale_answers", unit: "total",
             "Expired answers given with TTL 30 s because every upstream failed (RFC 8767 serve-stale).")
    }
    static var unwantedReplies: MetricNameDescriptor {
        name("upstream_unwanted_replies", unit: "total",
             "Datagrams on the forwarder's query ports that were not the awaited reply (wrong ID, source, question or letter case).")
    }
    static var spoofingRetries: MetricNameDescriptor {
        name("upstream_spoofing_retries", unit: "total",
             "Questions asked again over TCP because their UDP exchange looked spoofed.")
    }
    static var firewallAttempts: MetricNameDescriptor {
        name("firewall_attempts", unit: "total",
             "Bypass attempts the firewall table caught (SPEC 9b), by action: dns_redirected (DNS to another resolver, answered by Scroll Off), dns_refused, dot_refused (port 853), doh_refused (HTTPS to a known DoH resolver), resolver_refused (any other TCP or UDP port of a known resolver: DNSCrypt, DNS over QUIC, DNS on 5353).")
    }
    static var firewallClientAttempts: MetricNameDescriptor {
        name("firewall_client_attempts", unit: "total",
             "Bypass attempts the firewall table caught per device (SPEC 9b), by kind: dns (another resolver), dot (port 853), doh (HTTPS to a known DoH resolver), resolver (another port of a known resolver); at most 256 addresses, the rest as client=\"other\". Read every 2 s.")
    }
    static var streamReaders: MetricNameDescriptor {
        name("event_stream_readers", "Readers following the live events now: event streams on the control socket, the household page's live view, the [notify] hook.")
    }
    static var streamEventsSent: MetricNameDescriptor {
        name("event_stream_events_sent", unit: "total", "Events written to live readers (each event once per reader that got it).")
    }
    static var streamReadersDropped: MetricNameDescriptor {
        name("event_stream_readers_dropped", unit: "total",
             "Live readers let go for falling 256 commits' events behind; each may resume from its last event id.")
    }
    static var streamQueueDepth: MetricNameDescriptor {
        name("event_stream_queue_depth", "Commits' events (and heartbeats) the slowest live reader has queued and not yet taken; it is let go at 256.")
    }
    static var urgesPending: MetricNameDescriptor {
        name("urges_pending", "Urges the DNS path recorded that wait for their batch to be written (within 250 ms, then published to live readers).")
    }
    static var buildInfo: MetricNameDescriptor { name("build_info", "This build; always 1.") }
    static var upstreamUp: MetricNameDescriptor {
        name("upstream_up", "1 while the upstream answers; 0 while it is backed off after repeated failures.")
    }
    static var upstreamConsecutiveFailures: MetricNameDescriptor {
        name("upstream_consecutive_failures", "Failures of the upstream since its last answer.")
    }
    static var upstreamFailures: MetricNameDescriptor {
        name("upstream_failures", unit: "total", "Exchanges with the upstream that timed out or failed on the network.")
    }
    static var listDomains: MetricNameDescriptor { name("list_domains", "Domains in the copy of the list in force.") }
    static var listAge: MetricNameDescriptor {
        name("list_age", unit: "seconds", "Seconds since the list's last good download.")
    }
    static var grantsActive: MetricNameDescriptor {
        name("grants_active", "Entries opened now by a running grant (spend, peek or token).")
    }

    private static func name(_ metric: String, unit: String = "", _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "scrolloff", metricName: metric, unitName: unit, helpText: help)
    }
}
