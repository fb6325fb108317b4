@testable import Helper
import Sinkhole
import Testing

@Suite struct MetricsExpositionTests {
    static func totals(_ pairs: [QueryOutcome: UInt64] = [:], buckets: [UInt64] = [], sum: UInt64 = 0) -> QueryTotals {
        var outcomes = Array(repeating: UInt64(0), count: QueryOutcome.allCases.count)
        for (outcome, count) in pairs { outcomes[outcome.rawValue] = count }
        var all = Array(repeating: UInt64(0), count: QueryLatencyBuckets.upperBoundsNanoseconds.count + 1)
        for (index, count) in buckets.enumerated() { all[index] = count }
        return QueryTotals(outcomes: outcomes, buckets: all, sumNanoseconds: sum)
    }

    static func reading(
        _ totals: QueryTotals, lists: [MetricsReading.List] = [], grants: [(profile: String, count: Int)] = [("default", 0)]
    ) -> MetricsReading {
        MetricsReading(
            queries: totals,
            upstreams: [UpstreamStatus(address: "127.0.0.1:53", up: false, consecutiveFailures: 4, totalFailures: 9)],
            cacheEntries: 12, lists: lists, grantsActive: grants)
    }

    static func lines(_ bytes: [UInt8]) -> Set<String> { Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)) }

    @Test func every_series_is_exposed_with_its_type() {
        let text = Self.lines(MetricsExposition(version: "9.9.9").render(Self.reading(
            Self.totals([.blocked: 3, .forwarded: 2], buckets: [1, 4], sum: 260_000),
            lists: [MetricsReading.List(name: "social", domains: 120, ageSeconds: 90.5)],
            grants: [("default", 1), ("kids", 0)])))
        for expected in [
            "# TYPE scrolloff_dns_queries_total counter",
            #"scrolloff_dns_queries_total{result="blocked"} 3"#,
            #"scrolloff_dns_queries_total{result="forwarded"} 2"#,
            #"scrolloff_dns_queries_total{result="cached"} 0"#,
            "# TYPE scrolloff_dns_query_duration_seconds histogram",
            #"scrolloff_dns_query_duration_seconds_bucket{le="0.00005"} 1"#,
            #"scrolloff_dns_query_duration_seconds_bucket{le="0.0001"} 5"#,
            #"scrolloff_dns_query_duration_seconds_bucket{le="2"} 5"#,
            #"scrolloff_dns_query_duration_seconds_bucket{le="+Inf"} 5"#,
            "scrolloff_dns_query_duration_seconds_sum 0.00026",
            "scrolloff_dns_query_duration_seconds_count 5",
            "scrolloff_cache_entries 12.0",
            #"scrolloff_upstream_up{upstream="127.0.0.1:53"} 0.0"#,
            #"scrolloff_upstream_consecutive_failures{upstream="127.0.0.1:53"} 4.0"#,
            #"scrolloff_upstream_failures_total{upstream="127.0.0.1:53"} 9"#,
            #"scrolloff_list_domains{list="social"} 120.0"#,
            #"scrolloff_list_age_seconds{list="social"} 90.5"#,
            #"scrolloff_grants_active{profile="default"} 1.0"#,
            #"scrolloff_grants_active{profile="kids"} 0.0"#,
            #"scrolloff_build_info{version="9.9.9"} 1.0"#,
        ] {
            #expect(text.contains(expected), "\(expected)")
        }
    }

    @Test func the_event_streams_readers_sends_drops_queue_and_pending_urges_are_exposed() {
        let exposition = MetricsExposition(version: "1")
        var reading = Self.reading(Self.totals())
        reading.eventStream = MetricsReading.EventStreamTotals(readers: 3, eventsSent: 40, readersDropped: 1, deepestQueue: 7, urgesPending: 2)
        _ = exposition.render(reading)
        reading.eventStream = MetricsReading.EventStreamTotals(readers: 2, eventsSent: 55, readersDropped: 2, deepestQueue: 0, urgesPending: 0)
        let text = Self.lines(exposition.render(reading))
        for expected in [
            "# TYPE scrolloff_event_stream_readers gauge", "scrolloff_event_stream_readers 2.0",
            "# TYPE scrolloff_event_stream_events_sent_total counter", "scrolloff_event_stream_events_sent_total 55",
            "# TYPE scrolloff_event_stream_readers_dropped_total counter", "scrolloff_event_stream_readers_dropped_total 2",
            "# TYPE scrolloff_event_stream_queue_depth gauge", "scrolloff_event_stream_queue_depth 0.0",
            "# TYPE scrolloff_urges_pending gauge", "scrolloff_urges_pending 0.0",
        ] {
            #expect(text.contains(expected), "\(expected) in \(text.sorted())")
        }
    }

    /// A helper on the shared store exposes its round trips, failures, stale commits, notifications
    /// and the last notification's lag, counters following the store's totals; one on SQLite none of them.
    @Test func the_shared_stores_round_trips_failures_and_notify_lag_are_exposed_and_absent_on_sqlite() {
        let exposition = MetricsExposition(version: "1")
        var reading = Self.reading(Self.totals())
        #expect(!Self.lines(exposition.render(reading)).contains { $0.contains("scrolloff_store_") })
        reading.store = MetricsReading.StoreTotals(roundTrips: 10, failures: 1, staleCommits: 0, notifications: 2, lastNotifyLagSeconds: 0.25)
        _ = exposition.render(reading)
        reading.store = MetricsReading.StoreTotals(roundTrips: 25, failures: 3, staleCommits: 1, notifications: 4, lastNotifyLagSeconds: 0.5)
        let text = Self.lines(exposition.render(reading))
        for expected in [
            "# TYPE scrolloff_store_round_trips_total counter", "scrolloff_store_round_trips_total 25",
            "scrolloff_store_failures_total 3", "scrolloff_store_stale_commits_total 1", "scrolloff_store_notifications_total 4",
            "# TYPE scrolloff_store_notify_lag_seconds gauge", "scrolloff_store_notify_lag_seconds 0.5",
        ] {
            #expect(text.contains(expected), "\(expected) in \(text.sorted())")
        }
    }

    @Test func counters_follow_the_totals_across_scrapes() {
        let exposition = MetricsExposition(version: "1")
        _ = exposition.render(Self.reading(Self.totals([.cached: 5])))
        let second = Self.lines(exposition.render(Self.reading(Self.totals([.cached: 7]))))
        #expect(second.contains(#"scrolloff_dns_queries_total{result="cached"} 7"#))
    }

    @Test func a_removed_list_or_profile_leaves_the_exposition() {
        let exposition = MetricsExposition(version: "1")
        _ = exposition.render(Self.reading(
            Self.totals(), lists: [MetricsReading.List(name: "gone", domains: 3, ageSeconds: 1)], grants: [("kids", 2)]))
        let text = String(decoding: exposition.render(Self.reading(Self.totals(), lists: [], grants: [("default", 0)])), as: UTF8.self)
        #expect(!text.contains(#"list="gone""#), "\(text)")
        #expect(!text.contains(#"profile="kids""#))
        #expect(text.contains(#"scrolloff_grants_active{profile="default"} 0.0"#))
    }

    static func upstreams(_ statuses: [(String, UInt64)]) -> MetricsReading {
        MetricsReading(
            queries: totals(),
            upstreams: statuses.map { UpstreamStatus(address: $0.0, up: true, consecutiveFailures: 0, totalFailures: $0.1) },
            cacheEntries: 0, lists: [], grantsActive: [])
    }

    static func failures(_ text: Set<String>, _ address: String) -> String? {
        let prefix = #"scrolloff_upstream_failures_total{upstream="\#(address)"} "#
        return text.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// A reload from [a, b] to [a] restarts the forwarder's totals from 0: a's counter goes on
    /// from 9 (never back, never frozen until it passes 9) and b's series leave the exposition.
    @Test func a_reload_that_changes_the_upstreams_drops_removed_ones_and_keeps_counting_the_others() {
        let exposition = MetricsExposition(version: "1")
        let first = Self.lines(exposition.render(Self.upstreams([("10.0.0.1:53", 9), ("10.0.0.2:53", 4)])))
        #expect(Self.failures(first, "10.0.0.1:53") == "9")
        #expect(Self.failures(first, "10.0.0.2:53") == "4")

        let reloaded = Self.lines(exposition.render(Self.upstreams([("10.0.0.1:53", 2)])))
        #expect(Self.failures(reloaded, "10.0.0.1:53") == "11", "\(reloaded)")
        #expect(!reloaded.contains { $0.contains("10.0.0.2:53") }, "\(reloaded)")

        let later = Self.lines(exposition.render(Self.upstreams([("10.0.0.1:53", 5)])))
        #expect(Self.failures(later, "10.0.0.1:53") == "14")
    }

    /// Table: each row is the totals the forwarder reports at successive scrapes of one upstream
    /// set, and the counter expected after the last one.
    @Test(arguments: [
        ([UInt64(3), 7, 7, 12], "12"), // steady: the counter is the total
        ([9, 2], "11"), // health restarted without a set change (a changed backoff): 2 more
        ([0, 0], "0"),
    ])
    func failures_counter_never_goes_backwards(_ scrapes: [UInt64], _ expected: String) {
        let exposition = MetricsExposition(version: "1")
        var text: Set<String> = []
        for total in scrapes { text = Self.lines(exposition.render(Self.upstreams([("10.0.0.1:53", total)]))) }
        #expect(Self.failures(text, "10.0.0.1:53") == expected, "\(text)")
    }

    /// Re-adding an upstream that a reload removed starts its series afresh.
    @Test func an_upstream_removed_and_added_back_starts_again_from_its_new_total() {
        let exposition = MetricsExposition(version: "1")
        _ = exposition.render(Self.upstreams([("10.0.0.1:53", 9), ("10.0.0.2:53", 4)]))
        _ = exposition.render(Self.upstreams([("10.0.0.1:53", 0)]))
        let back = Self.lines(exposition.render(Self.upstreams([("10.0.0.1:53", 0), ("10.0.0.2:53", 1)])))
        #expect(Self.failures(back, "10.0.0.2:53") == "1", "\(back)")
        #expect(Self.failures(back, "10.0.0.1:53") == "9")
    }

    @Test func a_list_never_downloaded_has_no_domains_or_age_series() {
        let text = String(decoding: MetricsExposition(version: "1").render(Self.reading(
            Self.totals(), lists: [MetricsReading.List(name: "new", domains: nil, ageSeconds: nil)])), as: UTF8.self)
        #expect(!text.contains(#"list="new""#))
    }

    @Test(arguments: [
        (UInt64(0), "0"), (50_000, "0.00005"), (2_500_000, "0.0025"), (1_000_000_000, "1"), (2_000_000_001, "2.000000001"),
    ])
    func bucket_bounds_are_written_as_exact_decimal_seconds(nanoseconds: UInt64, text: String) {
        #expect(MetricsExposition.seconds(nanoseconds) == text)
    }
}
