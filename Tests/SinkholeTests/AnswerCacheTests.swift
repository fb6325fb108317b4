import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// The cache (RFC 1035 §7.4, RFC 2308) and its replay for each client.
@Suite struct AnswerCacheTests {
    static let second: UInt64 = 1_000_000_000
    static let t0: UInt64 = 1_000 * second

    static func question(_ name: String, _ type: DNSType = .a) throws -> OutgoingQuestion {
        OutgoingQuestion(name: try DNSName(name).lowercased.wireBytes, type: type, class: .in, dnssecOK: false, checkingDisabled: false)
    }

    static func reply(
        _ name: String, _ type: DNSType = .a, rcode: DNSRcode = .noError, answers: [DNSRecord] = [], authorities: [DNSRecord] = []
    ) throws -> DNSMessage {
        DNSMessage(
            header: DNSHeader(id: 77, isResponse: true, recursionDesired: true, recursionAvailable: true), rcode: rcode,
            questions: [DNSQuestion(name: try DNSName(name), type: type)], answers: answers, authorities: authorities)
    }

    static func soa(_ owner: String, ttl: UInt32, minimum: UInt32) throws -> DNSRecord {
        DNSRecord(name: try DNSName(owner), type: .soa, ttl: ttl, rdata: .soa(SOAData(
            primaryNameServer: try DNSName("ns.test"), responsibleMailbox: try DNSName("h.test"),
            serial: 1, refresh: 1, retry: 1, expire: 1, minimum: minimum)))
    }

    /// Replays `answer` for a fresh query `packet` at time `now`.
    static func replay(
        _ answer: CachedAnswer, _ packet: [UInt8], now: UInt64, decision: PolicyDecision = .allowed,
        policy: any QueryPolicy = AllowAllPolicy(), limit: Int? = nil
    ) throws -> DNSMessage {
        var query = DNSQuery()
        try query.parse(packet)
        var scratch: [UInt8] = []
        var builder = DNSResponseBuilder()
        let output = AnswerRenderer.render(
            answer, query: query, limit: limit ?? query.udpReplyLimit(), decision: decision, policy: policy,
            client: .unknown, blocking: BlockingSettings(), now: now, scratch: &scratch, builder: &builder)
        return try Packet.parse(output == .scratch ? scratch : builder.bytes)
    }

    @Test func replay_counts_ttls_down_and_uses_the_clients_id_and_spelling() throws {
        let name = try DNSName("host.test")
        let answer = CachedAnswer.normalize(
            try Self.reply("host.test", answers: [.a(name, ttl: 300, IPv4Address(10, 0, 0, 1))]),
            question: try Self.question("host.test"), receivedAt: Self.t0)
        #expect(answer.naturalLifetime == 300)
        let message = try Self.replay(answer, try Packet.query("HoSt.TeSt", id: 4242), now: Self.t0 + 100 * Self.second)
        #expect(message.header.id == 4242)
        #expect(message.questions.first?.name.description == "HoSt.TeSt")
        #expect(message.answers.map(\.ttl) == [200])
        #expect(message.answers.first?.rdata == .a(IPv4Address(10, 0, 0, 1)))
    }

    @Test func managed_names_get_the_policy_cap_on_every_ttl() throws {
        let name = try DNSName("host.test")
        let answer = CachedAnswer.normalize(
            try Self.reply("host.test", answers: [.a(name, ttl: 3600, IPv4Address(10, 0, 0, 1))]),
            question: try Self.question("host.test"), receivedAt: Self.t0)
        let message = try Self.replay(answer, try Packet.query("host.test"), now: Self.t0, decision: .managed(ttlCap: 42))
        #expect(message.answers.map(\.ttl) == [42])
        let floor = try Self.replay(answer, try Packet.query("host.test"), now: Self.t0, decision: .managed(ttlCap: 0))
        #expect(floor.answers.map(\.ttl) == [1])
    }

    @Test func negative_answer_lives_min_of_soa_ttl_and_minimum() throws {
        let answer = CachedAnswer.normalize(
            try Self.reply("nope.test", rcode: .nameError, authorities: [try Self.soa("test", ttl: 900, minimum: 60)]),
            question: try Self.question("nope.test"), receivedAt: Self.t0)
        #expect(answer.isNegative)
        #expect(answer.naturalLifetime == 60)
        #expect(AnswerCache.lifetime(of: answer, CacheConfiguration()) == 60)
        let message = try Self.replay(answer, try Packet.query("nope.test"), now: Self.t0 + 10 * Self.second)
        #expect(message.rcode == .nameError)
        #expect(message.authorities.map(\.ttl) == [50])
    }

    @Test func negative_answer_without_soa_and_errors_are_not_cached() throws {
        let bare = CachedAnswer.normalize(
            try Self.reply("nope.test", rcode: .nameError), question: try Self.question("nope.test"), receivedAt: Self.t0)
        #expect(AnswerCache.lifetime(of: bare, CacheConfiguration()) == nil)
        let failure = CachedAnswer.failure(try Self.question("x.test"), receivedAt: Self.t0)
        #expect(AnswerCache.lifetime(of: failure, CacheConfiguration()) == nil)
    }

    @Test func ttl_clamps_apply_to_the_cache_lifetime() throws {
        let name = try DNSName("host.test")
        let long = CachedAnswer.normalize(
            try Self.reply("host.test", answers: [.a(name, ttl: 999_999, IPv4Address(1, 2, 3, 4))]),
            question: try Self.question("host.test"), receivedAt: Self.t0)
        let configuration = CacheConfiguration(minimumTTL: 5, maximumTTL: 600)
        #expect(AnswerCache.lifetime(of: long, configuration) == 600)
        let short = CachedAnswer.normalize(
            try Self.reply("host.test", answers: [.a(name, ttl: 1, IPv4Address(1, 2, 3, 4))]),
            question: try Self.question("host.test"), receivedAt: Self.t0)
        #expect(AnswerCache.lifetime(of: short, configuration) == 5)
    }

    @Test func cname_chain_through_a_blocked_name_is_answered_as_blocked() throws {
        let answer = CachedAnswer.normalize(
            try Self.reply("innocent.test", answers: [
                DNSRecord(name: try DNSName("innocent.test"), type: .cname, ttl: 300, rdata: .cname(try DNSName("edge.Tracker.test"))),
                .a(try DNSName("edge.tracker.test"), ttl: 300, IPv4Address(10, 9, 9, 9)),
            ]),
            question: try Self.question("innocent.test"), receivedAt: Self.t0)
        let policy = try TablePolicy(blocked: ["tracker.test"])
        let message = try Self.replay(answer, try Packet.query("innocent.test"), now: Self.t0, policy: policy)
        #expect(message.answers.map(\.rdata) == [.a(.any)])
        #expect(message.answers.allSatisfy { $0.ttl <= 10 })
        let open = try Self.replay(answer, try Packet.query("innocent.test"), now: Self.t0)
        #expect(open.answers.count == 2)
    }

    @Test func a_large_answer_is_truncated_to_512_without_edns_and_kept_whole_over_tcp() throws {
        let name = try DNSName("big.test")
        let strings = (0..<4).map { _ in Array(repeating: UInt8(ascii: "x"), count: 200) }
        let answer = CachedAnswer.normalize(
            try Self.reply("big.test", .txt, answers: [DNSRecord(name: name, type: .txt, ttl: 60, rdata: .txt(strings))]),
            question: try Self.question("big.test", .txt), receivedAt: Self.t0)
        let udp = try Self.replay(answer, try Packet.query("big.test", .txt), now: Self.t0)
        #expect(udp.header.truncated)
        #expect(udp.answers.isEmpty)
        #expect(udp.questions.count == 1)
        let tcp = try Self.replay(answer, try Packet.query("big.test", .txt), now: Self.t0, limit: 65535)
        #expect(!tcp.header.truncated)
        #expect(tcp.answers.count == 1)
        let edns = try Self.replay(answer, try Packet.query("big.test", .txt, edns: EDNS(udpPayloadSize: 4096, dnssecOK: true)), now: Self.t0)
        #expect(!edns.header.truncated)
        #expect(edns.edns?.udpPayloadSize == 1232)
        #expect(edns.edns?.dnssecOK == true)
    }

    @Test func identical_questions_in_flight_share_one_promise_and_then_hit() throws {
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache()
        var query = DNSQuery()
        try query.parse(try Packet.query("shared.test"))
        guard case .miss(let promise) = cache.lookup(CacheKey(query), now: Self.t0, on: loop) else {
            Issue.record("first lookup must miss")
            return
        }
        var upper = DNSQuery()
        try upper.parse(try Packet.query("SHARED.test", id: 9))
        guard case .wait(let future) = cache.lookup(CacheKey(upper), now: Self.t0, on: loop) else {
            Issue.record("second lookup must wait for the first")
            return
        }
        let name = try DNSName("shared.test")
        promise.succeed(CachedAnswer.normalize(
            try Self.reply("shared.test", answers: [.a(name, ttl: 60, IPv4Address(1, 1, 1, 1))]),
            question: OutgoingQuestion(query), receivedAt: Self.t0))
        #expect(try future.wait().naturalLifetime == 60)
        guard case .hit = cache.lookup(CacheKey(query), now: Self.t0 + Self.second, on: loop) else {
            Issue.record("third lookup must hit")
            return
        }
        guard case .miss = cache.lookup(CacheKey(query), now: Self.t0 + 61 * Self.second, on: loop) else {
            Issue.record("after the TTL the entry must be gone")
            return
        }
        #expect(cache.statistics.misses == 2)
    }

    @Test func dnssec_ok_questions_are_cached_apart() throws {
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache()
        var plain = DNSQuery()
        try plain.parse(try Packet.query("do.test"))
        var withDO = DNSQuery()
        try withDO.parse(try Packet.query("do.test", edns: EDNS(dnssecOK: true)))
        #expect(CacheKey(plain) != CacheKey(withDO))
        guard case .miss(let first) = cache.lookup(CacheKey(plain), now: Self.t0, on: loop),
              case .miss(let second) = cache.lookup(CacheKey(withDO), now: Self.t0, on: loop)
        else {
            Issue.record("both must miss")
            return
        }
        first.fail(CacheBypassed())
        second.fail(CacheBypassed())
    }

    @Test func the_oldest_entries_are_evicted_at_capacity() throws {
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 3))
        for index in 0..<5 {
            var query = DNSQuery()
            try query.parse(try Packet.query("n\(index).test"))
            guard case .miss(let promise) = cache.lookup(CacheKey(query), now: Self.t0, on: loop) else {
                Issue.record("n\(index) must miss")
                return
            }
            let name = try DNSName("n\(index).test")
            promise.succeed(CachedAnswer.normalize(
                try Self.reply("n\(index).test", answers: [.a(name, ttl: 60, IPv4Address(1, 1, 1, 1))]),
                question: OutgoingQuestion(query), receivedAt: Self.t0))
        }
        #expect(cache.count == 3)
        // Hits first: a miss registers the question and would evict again.
        for (index, present) in [(4, true), (3, true), (2, true), (1, false), (0, false)] {
            var query = DNSQuery()
            try query.parse(try Packet.query("n\(index).test"))
            let result = cache.lookup(CacheKey(query), now: Self.t0, on: loop)
            if case .hit = result { #expect(present, "n\(index)") } else { #expect(!present, "n\(index)") }
            if case .miss(let promise) = result { promise.fail(CacheBypassed()) }
        }
    }
}
