import NIOCore
import NIOPosix
import Sinkhole
import Testing

@Suite struct QueryCountersTests {
    static func reply(rcode: UInt8) -> [UInt8] { [0x12, 0x34, 0x81, 0x80 | rcode] + Array(repeating: 0, count: 8) }

    @Test(arguments: [
        (QueryRoute.blocked, UInt8(0), QueryOutcome.blocked),
        (.blocked, 3, .blocked), // --blocking-mode nxdomain
        (.blocked, 5, .blocked), // --blocking-mode refused
        (.forwarded, 0, .forwarded),
        (.forwarded, 3, .forwarded), // NXDOMAIN is an answer
        (.forwarded, 2, .servfail),
        (.forwarded, 5, .refused),
        (.cached, 0, .cached),
        (.cached, 2, .servfail),
        (.local, 0, .local), // canary NODATA
        (.local, 3, .local), // canary NXDOMAIN
        (.local, 1, .formerr),
        (.local, 4, .notimp),
        (.local, 5, .refused),
    ])
    func outcome_is_the_route_refined_by_the_reply_rcode(route: QueryRoute, rcode: UInt8, expected: QueryOutcome) {
        let reply = Self.reply(rcode: rcode)
        #expect(QueryOutcome.classify(route: route, rcode: reply.withUnsafeBytes(QueryOutcome.rcode(of:))) == expected)
    }

    @Test func a_reply_shorter_than_a_header_counts_as_local() {
        let reply: [UInt8] = [0, 1]
        #expect(reply.withUnsafeBytes(QueryOutcome.rcode(of:)) == nil)
        #expect(QueryOutcome.classify(route: .forwarded, rcode: nil) == .local)
    }

    @Test func totals_sum_every_loop_and_put_latencies_in_their_buckets() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }
        let counters = QueryCounters()
        let loops = Array(group.makeIterator())
        let first = counters.shard(for: loops[0])
        let second = counters.shard(for: loops[1])
        #expect(first !== second)
        #expect(counters.shard(for: loops[0]) === first)

        first.record(.forwarded, nanoseconds: 40_000) // ≤ 50 µs
        first.record(.forwarded, nanoseconds: 50_000) // ≤ 50 µs: bounds are inclusive (`le`)
        second.record(.cached, nanoseconds: 50_001) // ≤ 100 µs
        second.record(.blocked, nanoseconds: 3_000_000_000) // +Inf
        second.record(.dropped, nanoseconds: 0) // counted, not timed

        let totals = counters.totals()
        #expect(totals[.forwarded] == 2)
        #expect(totals[.cached] == 1)
        #expect(totals[.blocked] == 1)
        #expect(totals[.dropped] == 1)
        #expect(totals.answered == 4)
        #expect(totals.buckets.count == QueryLatencyBuckets.upperBoundsNanoseconds.count + 1)
        #expect(totals.buckets[0] == 2)
        #expect(totals.buckets[1] == 1)
        #expect(totals.buckets.last == 1)
        #expect(totals.sumNanoseconds == 40_000 + 50_000 + 50_001 + 3_000_000_000)
    }
}
