import NIOCore
import NIOConcurrencyHelpers
import Synchronization

/// What a link did with a query, noted on the `QueryContext` for the metrics. The reply's RCODE
/// refines it afterwards (`QueryOutcome.classify`), so links that answer errors need not say so.
public enum QueryRoute: UInt8, Sendable {
    /// Answered by a link from what it knows (gate errors, canaries, the end of the chain).
    case local
    /// The policy blocked the name.
    case blocked
    /// Answered from the cache, or joined an identical question already in flight.
    case cached
    /// Sent to an upstream.
    case forwarded
}

/// The result label of `scrolloff_dns_queries_total`: one per query, decided when its reply is written.
public enum QueryOutcome: Int, CaseIterable, Sendable {
    case blocked, forwarded, cached, refused, servfail, formerr, notimp, local, dropped

    public var label: String {
        switch self {
        case .blocked: "blocked"
        case .forwarded: "forwarded"
        case .cached: "cached"
        case .refused: "refused"
        case .servfail: "servfail"
        case .formerr: "formerr"
        case .notimp: "notimp"
        case .local: "local"
        case .dropped: "dropped"
        }
    }

    /// A blocked answer counts as blocked whatever its RCODE (`--blocking-mode refused` answers
    /// REFUSED); otherwise an error RCODE (RFC 1035 §4.1.1) wins over where the answer came from,
    /// so an upstream's SERVFAIL counts as servfail, not as forwarded.
    public static func classify(route: QueryRoute, rcode: UInt8?) -> QueryOutcome {
        if route == .blocked { return .blocked }
        guard let rcode else { return .local }
        switch rcode {
        case 1: return .formerr
        case 2: return .servfail
        case 4: return .notimp
        case 5: return .refused
        default:
            switch route {
            case .cached: return .cached
            case .forwarded: return .forwarded
            case .local, .blocked: return .local
            }
        }
    }
}

extension QueryOutcome {
    /// The header's 4-bit RCODE (RFC 1035 §4.1.1), nil for a reply shorter than its flags.
    public static func rcode(of reply: UnsafeRawBufferPointer) -> UInt8? {
        reply.count >= 4 ? reply[3] & 0x0F : nil
    }
}

/// The latency histogram's bucket bounds: from a cache hit on loopback (tens of µs) to the
/// forwarder's overall timeout (2 s per upstream by default).
public enum QueryLatencyBuckets {
    public static let upperBoundsNanoseconds: [UInt64] = [
        50_000, 100_000, 250_000, 500_000,
        1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000,
        100_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_000_000_000,
    ]
}

/// Counters of one writer: an event loop's TCP handlers, or one UDP listener's thread (whose
/// answers that waited for an upstream are counted from its loop, the one other writer). So the
/// relaxed atomic adds seldom contend; the atomics are there for those and for the scrape, which
/// reads them from another thread.
public final class QueryCounterShard: @unchecked Sendable {
    // @unchecked: `cells` is written only through `Atomic` operations and freed in deinit.
    static let outcomeCount = QueryOutcome.allCases.count
    static let bucketCount = QueryLatencyBuckets.upperBoundsNanoseconds.count + 1 // + the +Inf bucket
    static let sumIndex = outcomeCount + bucketCount
    static let cellCount = sumIndex + 1

    private let cells: UnsafeMutablePointer<Synchronization.Atomic<UInt64>>
    private let bounds = QueryLatencyBuckets.upperBoundsNanoseconds

    init() {
        // Cache-line aligned and padded so two loops' shards never share a line.
        let bytes = (Self.cellCount * MemoryLayout<UInt64>.stride + 127) & ~127
        cells = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 128)
            .bindMemory(to: Synchronization.Atomic<UInt64>.self, capacity: Self.cellCount)
        for index in 0..<Self.cellCount { (cells + index).initialize(to: Synchronization.Atomic(0)) }
    }

    deinit {
        cells.deinitialize(count: Self.cellCount)
        UnsafeMutableRawPointer(cells).deallocate()
    }

    /// One query's result and, unless it was dropped, how long it took from packet to reply.
    @inline(__always)
    public func record(_ outcome: QueryOutcome, nanoseconds: UInt64) {
        add(1, at: outcome.rawValue)
        guard outcome != .dropped else { return }
        add(1, at: Self.outcomeCount + bucket(nanoseconds))
        add(nanoseconds, at: Self.sumIndex)
    }

    func add(_ value: UInt64, at index: Int) {
        cells[index].wrappingAdd(value, ordering: .relaxed)
    }

    func bucket(_ nanoseconds: UInt64) -> Int {
        var index = 0
        while index < bounds.count, nanoseconds > bounds[index] { index += 1 }
        return index
    }

    func load(_ index: Int) -> UInt64 { cells[index].load(ordering: .relaxed) }
}

/// Sums over every shard, as one scrape sees them.
public struct QueryTotals: Sendable, Equatable {
    /// Indexed by `QueryOutcome.rawValue`.
    public var outcomes: [UInt64]
    /// Per bucket, not cumulative; the last is +Inf.
    public var buckets: [UInt64]
    public var sumNanoseconds: UInt64

    public init(outcomes: [UInt64], buckets: [UInt64], sumNanoseconds: UInt64) {
        self.outcomes = outcomes
        self.buckets = buckets
        self.sumNanoseconds = sumNanoseconds
    }

    public subscript(_ outcome: QueryOutcome) -> UInt64 { outcomes[outcome.rawValue] }
    public var answered: UInt64 { buckets.reduce(0, &+) }
}

/// The query counters of the whole server: one shard per event loop and per UDP listener, so the
/// hot path takes no lock and shares no cache line; a scrape reads and sums them all.
public final class QueryCounters: Sendable {
    private let shards = NIOLockedValueBox<[ObjectIdentifier: QueryCounterShard]>([:])

    public init() {}

    /// The shard of `writer` (an event loop, a UDP listener); called once per channel or listener,
    /// never per query.
    public func shard(for writer: AnyObject) -> QueryCounterShard {
        shards.withLockedValue { shards in
            if let shard = shards[ObjectIdentifier(writer)] { return shard }
            let shard = QueryCounterShard()
            shards[ObjectIdentifier(writer)] = shard
            return shard
        }
    }

    public func totals() -> QueryTotals {
        let all = shards.withLockedValue { Array($0.values) }
        var totals = QueryTotals(
            outcomes: Array(repeating: 0, count: QueryCounterShard.outcomeCount),
            buckets: Array(repeating: 0, count: QueryCounterShard.bucketCount), sumNanoseconds: 0)
        for shard in all {
            for index in 0..<QueryCounterShard.outcomeCount { totals.outcomes[index] &+= shard.load(index) }
            for index in 0..<QueryCounterShard.bucketCount {
                totals.buckets[index] &+= shard.load(QueryCounterShard.outcomeCount + index)
            }
            totals.sumNanoseconds &+= shard.load(QueryCounterShard.sumIndex)
        }
        return totals
    }
}

extension QueryCounterShard {
    /// Records a written reply: its outcome from `route` and RCODE, its latency from `started`
    /// (monotonic nanoseconds, read when the packet was taken in).
    @inline(__always)
    func record(_ route: QueryRoute, reply: UnsafeRawBufferPointer, since started: UInt64) {
        let now = NIODeadline.now().uptimeNanoseconds
        record(QueryOutcome.classify(route: route, rcode: QueryOutcome.rcode(of: reply)), nanoseconds: now &- started)
    }

    /// The same for a reply in an array; reads it in place, without a copy.
    @inline(__always)
    func record(_ route: QueryRoute, reply: [UInt8], since started: UInt64) {
        reply.withUnsafeBytes { record(route, reply: $0, since: started) }
    }
}
