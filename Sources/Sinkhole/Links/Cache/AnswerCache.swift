import DNSWire
import NIOCore
import NIOConcurrencyHelpers

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
        flags = Self.flags(edns: query.edns, header: query.header)
    }

    /// The key of the query in `context`, read field by field: `CacheKey(context.query)` first
    /// copied the whole query out of the context (a retain and release of each of its arrays).
    init(_ context: QueryContext) {
        name = context.query.lowercasedName[...]
        type = context.query.type
        self.class = context.query.class
        flags = Self.flags(edns: context.query.edns, header: context.query.header)
    }

    /// The answer-changing bits of a query's header and OPT record.
    private static func flags(edns: EDNSQueryInfo?, header: DNSHeader) -> UInt8 {
        (edns?.dnssecOK == true ? 1 : 0) | (header.checkingDisabled ? 2 : 0)
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
    /// kept a full-capacity one alive (the forwarder soak, bench/soak.sh: RSS 333 MiB -> 1.34 GiB over 1 M names).
    var owned: CacheKey {
        var copy = self
        copy.name = name.withUnsafeBufferPointer { ArraySlice(Array($0)) }
        return copy
    }
}

/// Positive and negative answers (RFC 2308), bounded in entries and bytes, plus the questions in
/// flight so that identical concurrent questions share one upstream query (SPEC §9). The answers
/// live in one log (`AnswerLog`); a hit is copied out of it into the asker's own buffers.
public final class AnswerCache: Sendable {
    public enum Lookup {
        /// A fresh answer, copied into the caller's `AnswerParts`.
        case hit
        /// Someone already asked upstream; wait for that answer.
        case wait(EventLoopFuture<CachedAnswer>)
        /// Nobody has: ask, and complete this promise with the answer (the cache stores it).
        case miss(EventLoopPromise<CachedAnswer>)
    }

    /// A question asked upstream. The expired answer it replaces, if any, stays in the log, to be
    /// served should every upstream fail (RFC 8767).
    struct Pending {
        var future: EventLoopFuture<CachedAnswer>
        var serial: UInt64
    }

    /// RFC 8767 §4: a stale answer is given with TTL 30 s, and the upstreams are asked again for
    /// it no sooner than that ("failure recheck timer"), so a dead upstream is not hammered.
    public static let staleTTL: UInt32 = 30

    struct State {
        var log: AnswerLog
        /// Bounded by the forwarder's questions in flight, not by the cache.
        var pending: [CacheKey: Pending] = [:]
        var nextSerial: UInt64 = 1
        var hits = 0
        var misses = 0
        var staleAnswers: UInt64 = 0
        var configuration: CacheConfiguration

        init(configuration: CacheConfiguration) {
            self.configuration = configuration
            log = AnswerLog(byteBudget: configuration.byteBudget)
        }

        /// Stores a ready answer under `key`, within the bounds.
        mutating func store(_ answer: CachedAnswer, _ key: CacheKey, expiresAt: UInt64, staleBase: UInt64) {
            log.store(
                answer, key: key, expiresAt: expiresAt, staleBase: staleBase, capacity: configuration.capacity,
                byteBudget: configuration.byteBudget)
        }
    }

    private let state: NIOLockedValueBox<State>

    public init(configuration: CacheConfiguration = CacheConfiguration()) {
        state = NIOLockedValueBox(State(configuration: configuration))
    }

    /// The bounds in force.
    public var configuration: CacheConfiguration { state.withLockedValue { $0.configuration } }

    /// Puts new bounds in force (a configuration reload) and empties the cache, so every stored
    /// answer obeys the new capacity and TTL clamps. Questions in flight still reach the clients
    /// waiting for them; their answers are just not stored.
    public func reconfigure(_ configuration: CacheConfiguration) {
        // Swapped under the lock, freed after it: releasing the old log and up to the in-flight
        // questions while every event loop waits on this lock would stall DNS for the length of the free.
        var old = State(configuration: configuration)
        state.withLockedValue { state in
            swap(&state, &old)
            (state.hits, state.misses, state.nextSerial, state.staleAnswers) = (old.hits, old.misses, old.nextSerial, old.staleAnswers)
        }
        _ = consume old
    }

    /// `lookup(_:now:on:into:)` for callers that do not replay a hit (tests, probes).
    public func lookup(_ key: CacheKey, now: UInt64, on eventLoop: any EventLoop) -> Lookup {
        var parts = AnswerParts()
        return lookup(key, now: now, on: eventLoop, into: &parts)
    }

    /// Finds a fresh answer (copied into `parts`) or an in-flight question for `key`, or registers
    /// a new in-flight question whose promise lives on `eventLoop`. `now` is monotonic nanoseconds.
    public func lookup(_ key: CacheKey, now: UInt64, on eventLoop: any EventLoop, into parts: inout AnswerParts) -> Lookup {
        let found: Lookup? = state.withLockedValue { state in
            if let pending = state.pending[key] {
                state.hits += 1
                return .wait(pending.future)
            }
            guard let record = state.log.find(key), record.expiresAt > now else { return nil }
            state.hits += 1
            state.log.copy(record.position, into: &parts)
            return .hit
        }
        if let found { return found }

        let promise = eventLoop.makePromise(of: CachedAnswer.self)
        let owned = key.owned
        let serial: UInt64 = state.withLockedValue { state in
            state.misses += 1
            // Another loop may have registered the same question between the two locks; share it.
            if state.pending[owned] != nil { return 0 }
            // An expired answer stays while it may still be served stale; past that it is gone for good.
            if let record = state.log.find(owned),
                now &- record.staleBase > UInt64(state.configuration.maximumStaleAge) &* 1_000_000_000
            {
                state.log.remove(owned)
            }
            let serial = state.nextSerial
            state.nextSerial += 1
            state.pending[owned] = Pending(future: promise.futureResult, serial: serial)
            return serial
        }
        if serial == 0 {
            // Lost the race: follow the other query, and let our promise follow it too so nobody waits on it.
            let other: EventLoopFuture<CachedAnswer>? = state.withLockedValue { $0.pending[owned]?.future }
            if let other {
                other.cascade(to: promise)
                return .wait(other)
            }
        }
        promise.futureResult.whenComplete { [self] result in
            state.withLockedValue { state in
                guard let pending = state.pending[owned], pending.serial == serial else { return }
                state.pending[owned] = nil
                let stale = state.log.find(owned)
                if case .success(let answer) = result, answer.isStale, let stale {
                    // Served stale: replayed as it is until the recheck time, then the upstreams are asked again.
                    let recheck = answer.receivedAt &+ UInt64(Self.staleTTL) &* 1_000_000_000
                    state.store(answer, owned, expiresAt: recheck, staleBase: stale.staleBase)
                    return
                }
                // Nothing new to keep: the expired answer stays for serve-stale, if there is one.
                guard case .success(let answer) = result, let lifetime = Self.lifetime(of: answer, state.configuration) else { return }
                let expiresAt = answer.receivedAt &+ UInt64(lifetime) &* 1_000_000_000
                state.store(answer, owned, expiresAt: expiresAt, staleBase: expiresAt)
            }
        }
        return .miss(promise)
    }

    /// The answer to give instead of `failed` for the question in flight under `key`, when every
    /// upstream failed (RFC 8767 §4): the expired answer it replaces, with TTL 30 s, while it is
    /// younger than the maximum stale age; nil when there is none or the failure is not one.
    public func staleAnswer(for key: CacheKey, replacing failed: CachedAnswer, now: UInt64) -> CachedAnswer? {
        guard failed.rcode == .serverFailure else { return nil }
        let stale: CachedAnswer? = state.withLockedValue { state in
            guard state.pending[key] != nil, let record = state.log.find(key) else { return nil }
            guard now &- record.staleBase <= UInt64(state.configuration.maximumStaleAge) &* 1_000_000_000 else { return nil }
            return state.log.answer(at: record.position)
        }
        return stale?.servedStale(ttl: Self.staleTTL, now: now)
    }

    /// Counts one stale answer sent to a client (the metrics' `scrolloff_dns_stale_answers_total`).
    public func noteStaleAnswer() {
        state.withLockedValue { $0.staleAnswers &+= 1 }
    }

    /// Stale answers sent to clients since start (RFC 8767).
    public var staleAnswers: UInt64 { state.withLockedValue { $0.staleAnswers } }

    /// Number of entries: answers held and questions in flight.
    public var count: Int { state.withLockedValue { $0.log.count + $0.pending.count } }

    /// Bytes the cache holds from the allocator for its answers (the log's region and index).
    var footprint: Int { state.withLockedValue { $0.log.footprint } }

    public var statistics: (hits: Int, misses: Int) { state.withLockedValue { ($0.hits, $0.misses) } }

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

    /// Bytes of answers and names held, against `configuration.byteBudget`.
    var bytesHeld: Int { state.withLockedValue { $0.log.bytes } }
}
