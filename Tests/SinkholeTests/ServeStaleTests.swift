import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// The cache's memory bound and serve-stale (RFC 8767), on the chain as the server runs it.
@Suite struct ServeStaleTests {
    /// Answers every question at once from a fixed reply made `age` seconds ago, or fails them all.
    struct UpstreamLink: ResolverLink {
        let ttl: UInt32
        let failing: Bool
        let age: UInt64

        func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
            let question = OutgoingQuestion(context.query)
            let receivedAt = NIODeadline.now().uptimeNanoseconds &- age * 1_000_000_000
            if failing { return .upstream(context.eventLoop.makeSucceededFuture(.failure(question, receivedAt: receivedAt))) }
            let name = (try? DNSName(wireBytes: question.name)) ?? .root
            let reply = DNSMessage(
                header: DNSHeader(id: 1, isResponse: true, recursionDesired: true, recursionAvailable: true),
                questions: [DNSQuestion(name: name, type: .a)], answers: [.a(name, ttl: ttl, IPv4Address(10, 0, 0, 7))])
            return .upstream(context.eventLoop.makeSucceededFuture(.normalize(reply, question: question, receivedAt: receivedAt)))
        }
    }

    static func chain(_ cache: AnswerCache, _ policies: PolicyStore, upstream: UpstreamLink) -> ResolverChain {
        ResolverChain(links: [
            QueryGateLink(), PolicyLink(policies: policies, blocking: BlockingSettingsStore()),
            CacheLink(cache: cache, policies: policies, blocking: BlockingSettingsStore()), upstream,
        ])
    }

    /// Memory per forwarded query (SPEC §9): answers that are never stored (TTL 0 here) left their key in the eviction
    /// list until it held two capacities' worth: ~540 bytes per forwarded query, for good.
    @Test func uncacheable_answers_leave_no_trace_in_the_eviction_list() throws {
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 100_000))
        for index in 0..<20_000 {
            var query = DNSQuery()
            try query.parse(try Packet.query("n\(index).fwd.test"))
            guard case .miss(let promise) = cache.lookup(CacheKey(query), now: 1, on: loop) else {
                Issue.record("a new name must miss")
                return
            }
            promise.succeed(.failure(OutgoingQuestion(query), rcode: .noError, receivedAt: 1))
        }
        #expect(cache.count == 0)
        let empty = AnswerCache(configuration: CacheConfiguration(capacity: 100_000)).footprint
        #expect(cache.footprint == empty, "\(cache.footprint) bytes held for no answer (\(empty) when new)")
    }

    /// The soak (bench/soak.sh) with TTL 3600: once full, the cache must free each answer it evicts.
    @Test func evicted_answers_are_freed() throws {
        final class Weak { weak var answer: CachedAnswer? }
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 100))
        var watched: [Weak] = []
        for index in 0..<5_000 {
            var query = DNSQuery()
            try query.parse(try Packet.query("n\(index).fwd.test"))
            guard case .miss(let promise) = cache.lookup(CacheKey(query), now: 1, on: loop) else { continue }
            let name = try DNSName("n\(index).fwd.test")
            let reply = DNSMessage(
                header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: name, type: .a)],
                answers: [.a(name, ttl: 300, IPv4Address(10, 0, 0, 1))])
            let answer = CachedAnswer.normalize(reply, question: OutgoingQuestion(query), receivedAt: 1)
            if index < 50 { let w = Weak(); w.answer = answer; watched.append(w) }
            promise.succeed(answer)
        }
        loop.run()
        #expect(cache.count == 100)
        #expect(watched.filter { $0.answer != nil }.count == 0, "evicted answers still alive")
    }

    /// The soak (bench/soak.sh) with TTL 3600: a stored key shared its name buffer with the event loop's one
    /// reusable `DNSQuery` (`Array(slice)` of a whole-buffer slice hands back that same buffer), so the
    /// next parse had to allocate the query a new buffer of full capacity (256 octets reserved) and
    /// every cached answer pinned one for as long as it lived. A stored key must own exactly its bytes.
    @Test func a_stored_key_owns_its_name_bytes_apart_from_the_reused_query() throws {
        var query = DNSQuery()
        try query.parse(try Packet.query("owned.fwd.test"))
        let key = CacheKey(query).owned
        let queryBuffer = query.lowercasedName.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        let keyBuffer = key.name.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(keyBuffer != queryBuffer, "the stored key shares the reusable query's name buffer")
        #expect(key == CacheKey(query))
        // The next parse reuses the query's buffer in place and leaves the stored key as it was.
        try query.parse(try Packet.query("other.fwd.test"))
        #expect(query.lowercasedName.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } == queryBuffer)
        #expect(Array(key.name) == Array(try DNSName("owned.fwd.test").wireBytes))
    }

    /// The bound that is legitimate: a full cache keeps `capacity` answers and no more.
    @Test func a_full_cache_holds_its_capacity_and_evicts_the_oldest() throws {
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 500))
        var footprints: [Int] = []
        for index in 0..<5_000 {
            // From n1000 on the names (and so the answers) are one octet longer than before.
            if index % 1_000 == 0, index >= 2_000 { footprints.append(cache.footprint) }
            var query = DNSQuery()
            try query.parse(try Packet.query("n\(index).fwd.test"))
            guard case .miss(let promise) = cache.lookup(CacheKey(query), now: 1, on: loop) else { continue }
            let name = try DNSName("n\(index).fwd.test")
            let reply = DNSMessage(
                header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: name, type: .a)],
                answers: [.a(name, ttl: 300, IPv4Address(10, 0, 0, 1))])
            promise.succeed(.normalize(reply, question: OutgoingQuestion(query), receivedAt: 1))
        }
        #expect(cache.count == 500)
        // Once full, new answers take the space of the oldest: the log neither grows nor moves.
        footprints.append(cache.footprint)
        #expect(Set(footprints).count == 1, "bytes held at 2,000, 3,000, 4,000 and 5,000 names: \(footprints)")
    }

    @Test func an_expired_answer_is_served_stale_with_ttl_30_when_the_upstream_fails() throws {
        let cache = AnswerCache()
        let policies = PolicyStore(AllowAllPolicy())
        // Answered 10 s ago with TTL 5: expired 5 s ago when it is stored.
        let stored = ChainHarness(Self.chain(cache, policies, upstream: UpstreamLink(ttl: 5, failing: false, age: 10)))
        _ = try stored.run(try Packet.query("host.test"))
        let failing = ChainHarness(Self.chain(cache, policies, upstream: UpstreamLink(ttl: 5, failing: true, age: 0)))
        let stale = try Packet.parse(try #require(try failing.run(try Packet.query("HOST.test", id: 5))))
        #expect(stale.rcode == .noError)
        #expect(stale.answers.map(\.ttl) == [30])
        #expect(stale.answers.first?.rdata == .a(IPv4Address(10, 0, 0, 7)))
        #expect(stale.questions.first?.name.description == "HOST.test")
        // Replayed from the cache for its 30 s: the upstream is not asked again meanwhile.
        let again = try Packet.parse(try #require(try failing.run(try Packet.query("host.test"))))
        #expect(again.answers.first.map { $0.ttl <= 30 && $0.ttl >= 29 } == true)
        #expect(cache.staleAnswers == 2)
        // A name never answered has nothing stale to give.
        let never = try Packet.parse(try #require(try failing.run(try Packet.query("never.test"))))
        #expect(never.rcode == .serverFailure)
    }

    @Test func nothing_is_served_stale_past_the_maximum_stale_age() throws {
        let cache = AnswerCache(configuration: CacheConfiguration(maximumStaleAge: 60))
        let policies = PolicyStore(AllowAllPolicy())
        // Expired 95 s ago, more than the 60 s allowed.
        _ = try ChainHarness(Self.chain(cache, policies, upstream: UpstreamLink(ttl: 5, failing: false, age: 100)))
            .run(try Packet.query("host.test"))
        let failing = ChainHarness(Self.chain(cache, policies, upstream: UpstreamLink(ttl: 5, failing: true, age: 0)))
        let reply = try Packet.parse(try #require(try failing.run(try Packet.query("host.test"))))
        #expect(reply.rcode == .serverFailure)
        #expect(cache.staleAnswers == 0)
    }

    /// Policy first: a name blocked after its answer was cached gets the blocked answer, not the
    /// stale one, whether it is asked while the upstream is down or the stale copy is replayed.
    @Test func a_blocked_name_gets_the_blocked_answer_not_a_stale_one() throws {
        let cache = AnswerCache()
        let policies = PolicyStore(AllowAllPolicy())
        _ = try ChainHarness(Self.chain(cache, policies, upstream: UpstreamLink(ttl: 5, failing: false, age: 10)))
            .run(try Packet.query("host.test"))
        let failing = ChainHarness(Self.chain(cache, policies, upstream: UpstreamLink(ttl: 5, failing: true, age: 0)))
        _ = try failing.run(try Packet.query("host.test"))
        policies.replace(with: try TablePolicy(blocked: ["host.test"]))
        let blocked = try Packet.parse(try #require(try failing.run(try Packet.query("host.test"))))
        #expect(blocked.answers.map(\.rdata) == [.a(IPv4Address(0, 0, 0, 0))])
        #expect(blocked.answers.allSatisfy { $0.ttl <= 10 })
    }
}
