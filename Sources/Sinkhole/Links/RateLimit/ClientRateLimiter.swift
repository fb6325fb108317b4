import NIOCore
import NIOConcurrencyHelpers
import Synchronization

/// Per-client token buckets for `RateLimitLink`, in a table of fixed size (SPEC §9 forwarding:
/// one device must not starve a household's resolver).
///
/// Each bucket is kept as one number, the "theoretical arrival time" of the Generic Cell Rate
/// Algorithm (ITU-T I.371): a query is admitted when that time is at most `burst - 1` refill
/// intervals ahead of now, and admitting it moves the time one interval on. This is exactly a token
/// bucket of `burst` tokens refilled at `queriesPerSecond`, with no floating point and no timer.
///
/// Memory is bounded: the table is allocated once (`capacity` slots) and never grows. A new client
/// takes a free slot near its hash, or evicts the slot in that neighbourhood whose bucket has been
/// full the longest (the least recently busy client), which then starts again with a full burst.
/// A flood of spoofed addresses can therefore only reset other clients' buckets, never use memory.
/// Loopback clients are limited like any other: a local runaway process is the commonest case.
///
/// Lookups take one of 16 short locks, chosen by the address hash: event loops serving different
/// clients rarely meet, but queries of one client (on a laptop, every query comes from 127.0.0.1
/// or systemd-resolved's stub) all take the same one. That lock is held for a few comparisons and
/// is taken only when a limit is set; nothing allocates per query. The settings are one atomic
/// word, swapped by a reload.
///
/// Clients are counted per address, IPv6 included: on a home network every device shares one /64
/// (SLAAC), so a per-prefix budget, as authoritative servers use against the internet, would put
/// the whole household in one bucket.
public final class ClientRateLimiter: Sendable {
    /// Slots examined per lookup: a client lives within this many slots of its hash.
    static let probeWindow = 8
    static let shardCount = 16

    /// One table slot. `family` 0 = free.
    struct Slot {
        var family: UInt8 = 0
        var high: UInt64 = 0
        var low: UInt64 = 0
        /// GCRA theoretical arrival time, monotonic nanoseconds.
        var arrival: UInt64 = 0
    }

    final class Shard: Sendable {
        let slots: NIOLockedValueBox<[Slot]>
        init(size: Int) { slots = NIOLockedValueBox(Array(repeating: Slot(), count: size)) }
    }

    private let shards: [Shard]
    private let slotsPerShard: Int
    /// `queriesPerSecond << 32 | burst`; 0 = no limit.
    private let settings: Synchronization.Atomic<UInt64>
    private let clock: @Sendable () -> UInt64

    /// - Parameters:
    ///   - limit: nil = admit everything.
    ///   - capacity: clients tracked at most (rounded up to a multiple of 16 × 8).
    ///   - clock: monotonic nanoseconds; tests pass one they move by hand.
    public init(
        _ limit: RateLimit?, capacity: Int = 8192,
        clock: @escaping @Sendable () -> UInt64 = { NIODeadline.now().uptimeNanoseconds }
    ) {
        let perShard = max((capacity + Self.shardCount - 1) / Self.shardCount, Self.probeWindow)
        slotsPerShard = perShard
        shards = (0..<Self.shardCount).map { _ in Shard(size: perShard) }
        settings = Synchronization.Atomic(Self.pack(limit))
        self.clock = clock
    }

    /// Slots in the table: the most clients tracked at once.
    public var capacity: Int { slotsPerShard * Self.shardCount }

    public var limit: RateLimit? {
        let word = settings.load(ordering: .relaxed)
        guard word != 0 else { return nil }
        return RateLimit(queriesPerSecond: Int(word >> 32), burst: Int(word & 0xFFFF_FFFF))
    }

    /// Puts a new limit in force (a reload). Buckets keep their state: a client over the old
    /// budget is measured against the new one from its current position.
    public func replace(with limit: RateLimit?) {
        settings.store(Self.pack(limit), ordering: .relaxed)
    }

    /// Clients with a slot now (for tests and metrics).
    public var trackedClients: Int {
        shards.reduce(0) { total, shard in total + shard.slots.withLockedValue { $0.count(where: { $0.family != 0 }) } }
    }

    /// Whether `client` may send this query now; counts it when it may.
    public func admit(_ client: ClientAddress) -> Bool {
        let word = settings.load(ordering: .relaxed)
        guard word != 0 else { return true }
        let perSecond = max(word >> 32, 1)
        let burst = max(word & 0xFFFF_FFFF, 1)
        let interval = 1_000_000_000 / perSecond
        let (family, high, low) = Self.key(client)
        let hash = Self.mix(high &* 0x9E37_79B9_7F4A_7C15 ^ low ^ UInt64(family))
        let shard = shards[Int(hash % UInt64(Self.shardCount))]
        let home = Int((hash / UInt64(Self.shardCount)) % UInt64(slotsPerShard))
        let now = clock()
        let size = slotsPerShard
        return shard.slots.withLockedValue { slots in
            var chosen = -1
            var oldest = UInt64.max
            for step in 0..<Self.probeWindow {
                let index = (home + step) % size
                let slot = slots[index]
                if slot.family == family, slot.high == high, slot.low == low {
                    chosen = index
                    break
                }
                // A free slot, or the one whose bucket has been full the longest, is the one to take.
                let age = slot.family == 0 ? 0 : slot.arrival
                if age < oldest {
                    oldest = age
                    chosen = index
                }
            }
            if slots[chosen].family != family || slots[chosen].high != high || slots[chosen].low != low {
                slots[chosen] = Slot(family: family, high: high, low: low, arrival: now)
            }
            let arrival = max(slots[chosen].arrival, now)
            // Admitted while the bucket holds a token: at most burst - 1 intervals are already spoken for.
            guard arrival - now <= (burst - 1) * interval else { return false }
            slots[chosen].arrival = arrival + interval
            return true
        }
    }

    private static func pack(_ limit: RateLimit?) -> UInt64 {
        guard let limit else { return 0 }
        return UInt64(UInt32(clamping: limit.queriesPerSecond)) << 32 | UInt64(UInt32(clamping: limit.burst))
    }

    private static func key(_ client: ClientAddress) -> (UInt8, UInt64, UInt64) {
        switch client {
        case .v4(let address): (1, 0, UInt64(address))
        case .v6(let high, let low): (2, high, low)
        case .unknown: (3, 0, 0)
        }
    }

    /// SplitMix64's finaliser: spreads neighbouring addresses (a /24 of a household) over the table.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Answers REFUSED to a client beyond its query budget (`ClientRateLimiter`, RFC 1035 §4.1.1).
public struct RateLimitLink: ResolverLink {
    public let limiter: ClientRateLimiter

    public init(limiter: ClientRateLimiter) {
        self.limiter = limiter
    }

    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        if limiter.admit(context.client) { return next(context) }
        LocalAnswer.writeEmpty(into: &context.builder, query: context.query, rcode: .refused, limit: context.replyLimit)
        return .builtReply
    }
}
