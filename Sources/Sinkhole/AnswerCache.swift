import DNSWire
import NIOCore
import Synchronization

/// Bounds of the answer cache. TTLs come from the upstream and are clamped here (RFC 2308 §5 for
/// negative answers; the usual resolver clamps of unbound and dnsmasq for the rest).
public struct CacheConfiguration: Sendable, Equatable {
    /// Most answers kept; the oldest stored is evicted first.
    public var capacity: Int
    /// Most bytes of answers and names kept, `capacity` × `averageAnswerBytes`: the oldest
    /// stored is evicted first once they are exceeded. Counted in entries alone, a cache of big
    /// answers (TXT, DNSKEY, long CNAME chains; up to 65,535 octets each) could hold hundreds of
    /// times what the same number of address answers does.
    public var byteBudget: Int { capacity &* Self.averageAnswerBytes }
    /// A typical forwarded answer with its name is 60–300 octets (an address answer, a CNAME
    /// chain); the budget lets the cache reach `capacity` with those and stops it at a fraction of
    /// it with answers several KiB each (100,000 answers: 50 MiB of answer bytes at most).
    public static let averageAnswerBytes = 512
    /// Answers with a smaller TTL are kept this long (0: answers with TTL 0 are not cached).
    public var minimumTTL: UInt32
    public var maximumTTL: UInt32
    /// RFC 2308 §5 suggests one to three hours at most for negative answers.
    public var maximumNegativeTTL: UInt32
    /// Serve-stale (RFC 8767 §4 "max-stale-timer"): how long after it expired an answer may still
    /// be given when every upstream fails. 0 = never serve stale.
    public var maximumStaleAge: UInt32

    public init(
        capacity: Int = 100_000, minimumTTL: UInt32 = 0, maximumTTL: UInt32 = 86_400, maximumNegativeTTL: UInt32 = 3_600,
        maximumStaleAge: UInt32 = 86_400
    ) {
        self.capacity = max(capacity, 1)
        self.maximumStaleAge = maximumStaleAge
        self.minimumTTL = minimumTTL
        self.maximumTTL = max(maximumTTL, minimumTTL)
        self.maximumNegativeTTL = maximumNegativeTTL
    }
}

/// The cache key: a question as sent upstream. The name is a slice so that a lookup can use the
/// query's own buffer without copying; stored keys own their bytes.
public struct CacheKey: Hashable, Sendable {
    public var name: ArraySlice<UInt8>
    public var type: DNSType
    public var `class`: DNSClass
    /// Bit 0: DO, bit 1: CD.
    public var flags: UInt8

    public init(_ query: DNSQuery) {
        name = query.lowercasedName[...]
        type = query.type
        self.class = query.class
        flags = (query.edns?.dnssecOK == true ? 1 : 0) | (query.header.checkingDisabled ? 2 : 0)
    }

    init(name: ArraySlice<UInt8>, type: DNSType, class: DNSClass, flags: UInt8) {
        self.name = name
        self.type = type
        self.class = `class`
        self.flags = flags
    }

    /// A copy that owns exactly its name bytes, for storing. Copied through a buffer pointer on
    /// purpose: `Array(slice)` of a slice that spans its whole buffer returns that same buffer, so
    /// the stored key would share the event loop's reusable `DNSQuery` name buffer (256 octets
    /// reserved). The next parse then had to give the query a new buffer, and every answer stored
    /// kept a full-capacity one alive (issue 11 soak: RSS 333 MiB -> 1.34 GiB over 1 M names).
    var owned: CacheKey {
        var copy = self
        copy.name = name.withUnsafeBufferPointer { ArraySlice(Array($0)) }
        return copy
    }
}

/// Positive and negative answers (RFC 2308), bounded in entries, plus the questions in flight so
/// that identical concurrent questions share one upstream query (SPEC §9).
public final class AnswerCache: Sendable {
    public enum Lookup {
        /// A fresh answer.
        case hit(CachedAnswer)
        /// Someone already asked upstream; wait for that answer.
        case wait(EventLoopFuture<CachedAnswer>)
        /// Nobody has: ask, and complete this promise with the answer (the cache stores it).
        case miss(EventLoopPromise<CachedAnswer>)
    }

    enum Value {
        /// `staleBase`: when the answer first expired (for a stale answer served again, when the
        /// answer it came from did); serve-stale's age is counted from it.
        case ready(CachedAnswer, expiresAt: UInt64, staleBase: UInt64)
        /// Asked upstream; `stale` is the expired answer this question replaces, if any, kept to
        /// be served should every upstream fail (RFC 8767).
        case pending(EventLoopFuture<CachedAnswer>, stale: Stale?)
    }

    struct Stale {
        var answer: CachedAnswer
        var expiresAt: UInt64
        var staleBase: UInt64
    }

    /// RFC 8767 §4: a stale answer is given with TTL 30 s, and the upstreams are asked again for
    /// it no sooner than that ("failure recheck timer"), so a dead upstream is not hammered.
    public static let staleTTL: UInt32 = 30

    struct Entry {
        var value: Value
        var serial: UInt64

        /// What counts against the byte budget: the answer's wire bytes and the key's name.
        func bytes(_ key: CacheKey) -> Int {
            switch value {
            case .ready(let answer, _, _): answer.wire.count + key.name.count
            case .pending(_, let stale): (stale?.answer.wire.count ?? 0) + key.name.count
            }
        }
    }

    struct State {
        var entries: [CacheKey: Entry] = [:]
        /// Insertion order for eviction; stale pairs (replaced keys) are skipped when popped.
        var order: EvictionOrder
        var nextSerial: UInt64 = 1
        var hits = 0
        var misses = 0
        var staleAnswers: UInt64 = 0
        /// Bytes of the answers and key names held (ready answers and the stale ones kept by a
        /// pending entry), against `configuration.byteBudget`.
        var bytes = 0
        var configuration: CacheConfiguration

        /// Stores `entry` under `key` (nil removes it), keeping `bytes` true.
        mutating func set(_ key: CacheKey, _ entry: Entry?) {
            if let old = entries[key] { bytes -= old.bytes(key) }
            if let entry { bytes += entry.bytes(key) }
            entries[key] = entry
        }

        init(configuration: CacheConfiguration) {
            self.configuration = configuration
            order = EvictionOrder(slots: Self.orderSlots(capacity: configuration.capacity))
        }

        /// Room for every live entry's pair plus half a capacity of stale ones (keys stored again),
        /// so a compaction frees at least half a capacity of slots and costs O(1) per insertion.
        static func orderSlots(capacity: Int) -> Int { capacity + capacity / 2 + 1024 }
    }

    private let state: Mutex<State>

    public init(configuration: CacheConfiguration = CacheConfiguration()) {
        state = Mutex(State(configuration: configuration))
    }

    /// The bounds in force.
    public var configuration: CacheConfiguration { state.withLock { $0.configuration } }

    /// Puts new bounds in force (a configuration reload) and empties the cache, so every stored
    /// answer obeys the new capacity and TTL clamps. Questions in flight still reach the clients
    /// waiting for them; their answers are just not stored.
    public func reconfigure(_ configuration: CacheConfiguration) {
        // Swapped under the lock, freed after it: releasing up to `capacity` answers while every
        // event loop waits on this lock would stall DNS for the length of the free.
        var old = State(configuration: configuration)
        state.withLock { state in
            swap(&state, &old)
            (state.hits, state.misses, state.nextSerial, state.staleAnswers) = (old.hits, old.misses, old.nextSerial, old.staleAnswers)
        }
        _ = consume old
    }

    /// Finds a fresh answer or an in-flight question for `key`, or registers a new in-flight
    /// question whose promise lives on `eventLoop`. `now` is monotonic nanoseconds.
    public func lookup(_ key: CacheKey, now: UInt64, on eventLoop: any EventLoop) -> Lookup {
        let found: Lookup? = state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            switch entry.value {
            case .ready(let answer, let expiresAt, _) where expiresAt > now:
                state.hits += 1
                return .hit(answer)
            case .pending(let future, _):
                state.hits += 1
                return .wait(future)
            case .ready:
                return nil
            }
        }
        if let found { return found }

        let promise = eventLoop.makePromise(of: CachedAnswer.self)
        let owned = key.owned
        let serial: UInt64 = state.withLock { state in
            state.misses += 1
            // Another loop may have registered the same question between the two locks; share it.
            var stale: Stale?
            if let entry = state.entries[owned] {
                switch entry.value {
                case .pending: return 0
                case .ready(let answer, let expiresAt, let staleBase):
                    // Kept while it may still be served stale; an answer past that is gone for good.
                    if now &- staleBase <= UInt64(state.configuration.maximumStaleAge) &* 1_000_000_000 {
                        stale = Stale(answer: answer, expiresAt: expiresAt, staleBase: staleBase)
                    }
                }
            }
            return Self.insert(&state, key: owned, value: .pending(promise.futureResult, stale: stale), capacity: state.configuration.capacity)
        }
        if serial == 0 {
            // Lost the race: follow the other query, and let our promise follow it too so nobody waits on it.
            let other: EventLoopFuture<CachedAnswer>? = state.withLock { state in
                if case .pending(let future, _)? = state.entries[owned]?.value { return future }
                return nil
            }
            if let other {
                other.cascade(to: promise)
                return .wait(other)
            }
        }
        promise.futureResult.whenComplete { [self] result in
            state.withLock { state in
                guard let entry = state.entries[owned], entry.serial == serial else { return }
                guard case .pending(_, let stale) = entry.value else { return }
                if case .success(let answer) = result, answer.isStale, let stale {
                    // Served stale: replayed as it is until the recheck time, then the upstreams are asked again.
                    let recheck = answer.receivedAt &+ UInt64(Self.staleTTL) &* 1_000_000_000
                    state.set(owned, Entry(value: .ready(answer, expiresAt: recheck, staleBase: stale.staleBase), serial: serial))
                    return
                }
                guard case .success(let answer) = result, let lifetime = Self.lifetime(of: answer, state.configuration) else {
                    // Nothing new to keep: the expired answer stays for serve-stale, if there is one.
                    state.set(owned, stale.map {
                        Entry(value: .ready($0.answer, expiresAt: $0.expiresAt, staleBase: $0.staleBase), serial: serial)
                    })
                    return
                }
                let expiresAt = answer.receivedAt &+ UInt64(lifetime) &* 1_000_000_000
                state.set(owned, Entry(value: .ready(answer, expiresAt: expiresAt, staleBase: expiresAt), serial: serial))
                Self.evictOverBudget(&state)
            }
        }
        return .miss(promise)
    }

    /// The answer to give instead of `failed` for the question in flight under `key`, when every
    /// upstream failed (RFC 8767 §4): the expired answer it replaces, with TTL 30 s, while it is
    /// younger than the maximum stale age; nil when there is none or the failure is not one.
    public func staleAnswer(for key: CacheKey, replacing failed: CachedAnswer, now: UInt64) -> CachedAnswer? {
        guard failed.rcode == .serverFailure else { return nil }
        return state.withLock { state -> CachedAnswer? in
            guard case .pending(_, let stale?)? = state.entries[key]?.value else { return nil }
            guard now &- stale.staleBase <= UInt64(state.configuration.maximumStaleAge) &* 1_000_000_000 else { return nil }
            return stale.answer.servedStale(ttl: Self.staleTTL, now: now)
        }
    }

    /// Counts one stale answer sent to a client (the metrics' `scrolloff_dns_stale_answers_total`).
    public func noteStaleAnswer() {
        state.withLock { $0.staleAnswers &+= 1 }
    }

    /// Stale answers sent to clients since start (RFC 8767).
    public var staleAnswers: UInt64 { state.withLock { $0.staleAnswers } }

    /// Length of the eviction order list, stale pairs included (its bound is a test's business).
    var orderLength: Int { state.withLock { $0.order.count } }

    /// Number of entries, ready or pending.
    public var count: Int { state.withLock { $0.entries.count } }

    public var statistics: (hits: Int, misses: Int) { state.withLock { ($0.hits, $0.misses) } }

    /// How long `answer` stays, after clamps; nil when it must not be cached (errors, TTL 0,
    /// negative answers without an SOA, RFC 2308 §5).
    static func lifetime(of answer: CachedAnswer, _ configuration: CacheConfiguration) -> UInt32? {
        guard answer.rcode == .noError || answer.rcode == .nameError else { return nil }
        if answer.isNegative {
            guard answer.naturalLifetime > 0 else { return nil }
            return min(answer.naturalLifetime, configuration.maximumNegativeTTL)
        }
        let clamped = min(max(answer.naturalLifetime, configuration.minimumTTL), configuration.maximumTTL)
        return clamped > 0 ? clamped : nil
    }

    /// Evicts the oldest answers until the bytes held fit the budget (an answer just stored may
    /// push them over; the answer itself goes only if it alone is over the budget).
    private static func evictOverBudget(_ state: inout State) {
        while state.bytes > state.configuration.byteBudget, let oldest = state.order.popOldest() {
            if state.entries[oldest.key]?.serial == oldest.serial { state.set(oldest.key, nil) }
        }
    }

    /// Bytes of answers and names held, against `configuration.byteBudget`.
    var bytesHeld: Int { state.withLock { $0.bytes } }

    private static func insert(_ state: inout State, key: CacheKey, value: Value, capacity: Int) -> UInt64 {
        if state.entries[key] == nil {
            while state.entries.count >= capacity, let oldest = state.order.popOldest() {
                if state.entries[oldest.key]?.serial == oldest.serial { state.set(oldest.key, nil) }
            }
        }
        let serial = state.nextSerial
        state.nextSerial += 1
        state.set(key, Entry(value: value, serial: serial))
        // Keep the pairs proportional to the entries held now, not to the capacity: drop popped and
        // stale pairs once they outnumber the live ones (or fill the ring). Measured against the
        // capacity, a stream of answers that are never stored (TTL 0, errors) kept two capacities'
        // worth of keys (issue 11: ~540 bytes per forwarded query). In place, so nothing is
        // allocated; at most once per entries + 1024 insertions, so O(1) per insertion.
        if state.order.isFull || state.order.count > 2 * state.entries.count + 1024 {
            let entries = state.entries
            state.order.compact { entries[$0.key]?.serial == $0.serial }
        }
        state.order.append(key, serial: serial)
        return serial
    }
}
