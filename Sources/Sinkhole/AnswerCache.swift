import DNSWire
import NIOCore
import Synchronization

/// Bounds of the answer cache. TTLs come from the upstream and are clamped here (RFC 2308 §5 for
/// negative answers; the usual resolver clamps of unbound and dnsmasq for the rest).
public struct CacheConfiguration: Sendable, Equatable {
    /// Most answers kept; the oldest stored is evicted first.
    public var capacity: Int
    /// Answers with a smaller TTL are kept this long (0: answers with TTL 0 are not cached).
    public var minimumTTL: UInt32
    public var maximumTTL: UInt32
    /// RFC 2308 §5 suggests one to three hours at most for negative answers.
    public var maximumNegativeTTL: UInt32

    public init(capacity: Int = 100_000, minimumTTL: UInt32 = 0, maximumTTL: UInt32 = 86_400, maximumNegativeTTL: UInt32 = 3_600) {
        self.capacity = max(capacity, 1)
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

    /// A copy that owns its name bytes, for storing.
    var owned: CacheKey {
        var copy = self
        copy.name = ArraySlice(Array(name))
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
        case ready(CachedAnswer, expiresAt: UInt64)
        case pending(EventLoopFuture<CachedAnswer>)
    }

    struct Entry {
        var value: Value
        var serial: UInt64
    }

    struct State {
        var entries: [CacheKey: Entry] = [:]
        /// Insertion order for eviction; stale pairs (replaced keys) are skipped when popped.
        var order: [(key: CacheKey, serial: UInt64)] = []
        var orderHead = 0
        var nextSerial: UInt64 = 1
        var hits = 0
        var misses = 0
        var configuration: CacheConfiguration
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
            (state.hits, state.misses, state.nextSerial) = (old.hits, old.misses, old.nextSerial)
        }
        _ = consume old
    }

    /// Finds a fresh answer or an in-flight question for `key`, or registers a new in-flight
    /// question whose promise lives on `eventLoop`. `now` is monotonic nanoseconds.
    public func lookup(_ key: CacheKey, now: UInt64, on eventLoop: any EventLoop) -> Lookup {
        let found: Lookup? = state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            switch entry.value {
            case .ready(let answer, let expiresAt) where expiresAt > now:
                state.hits += 1
                return .hit(answer)
            case .pending(let future):
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
            if let entry = state.entries[owned], case .pending = entry.value { return 0 }
            return Self.insert(&state, key: owned, value: .pending(promise.futureResult), capacity: state.configuration.capacity)
        }
        if serial == 0 {
            // Lost the race: follow the other query, and let our promise follow it too so nobody waits on it.
            let other: EventLoopFuture<CachedAnswer>? = state.withLock { state in
                if case .pending(let future)? = state.entries[owned]?.value { return future }
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
                guard case .success(let answer) = result, let lifetime = Self.lifetime(of: answer, state.configuration) else {
                    state.entries[owned] = nil
                    return
                }
                let expiresAt = answer.receivedAt &+ UInt64(lifetime) &* 1_000_000_000
                state.entries[owned] = Entry(value: .ready(answer, expiresAt: expiresAt), serial: serial)
            }
        }
        return .miss(promise)
    }

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

    private static func insert(_ state: inout State, key: CacheKey, value: Value, capacity: Int) -> UInt64 {
        if state.entries[key] == nil {
            while state.entries.count >= capacity, state.orderHead < state.order.count {
                let oldest = state.order[state.orderHead]
                state.orderHead += 1
                if state.entries[oldest.key]?.serial == oldest.serial { state.entries[oldest.key] = nil }
            }
        }
        let serial = state.nextSerial
        state.nextSerial += 1
        state.entries[key] = Entry(value: value, serial: serial)
        state.order.append((key, serial))
        // Keep the order list proportional to the entries: drop popped and stale pairs now and then.
        if state.order.count > 2 * capacity + 1024 {
            let entries = state.entries
            state.order = state.order[state.orderHead...].filter { entries[$0.key]?.serial == $0.serial }
            state.orderHead = 0
        }
        return serial
    }
}
