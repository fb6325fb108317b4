import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// The swappable settings a configuration reload changes: blocking mode and TTL, cache bounds.
@Suite struct ReloadableSettingsTests {
    @Test(arguments: BlockingMode.allCases)
    func blocking_settings_round_trip_through_the_atomic_word(mode: BlockingMode) {
        let store = BlockingSettingsStore()
        #expect(store.current == BlockingSettings(mode: .null, blockedTTL: 10), "the SPEC §9 defaults")
        for ttl: UInt32 in [1, 3, 10] {
            store.replace(with: BlockingSettings(mode: mode, blockedTTL: ttl))
            #expect(store.current == BlockingSettings(mode: mode, blockedTTL: ttl))
        }
    }

    @Test func the_blocked_ttl_never_exceeds_the_setting_or_the_spec_ceiling() {
        #expect(BlockingSettings(blockedTTL: 0).blockedTTL == 1)
        #expect(BlockingSettings(blockedTTL: 60).blockedTTL == 10, "SPEC §9: at most 10 s")
        let three = BlockingSettings(blockedTTL: 3)
        #expect(three.ttl(cap: nil) == 3)
        #expect(three.ttl(cap: 8) == 3, "a managed entry's cap never lengthens the setting")
        #expect(three.ttl(cap: 2) == 2, "a shorter cap (the entry's next change) wins")
    }

    @Test func a_mode_swap_applies_to_the_next_blocked_answer_of_the_chain() throws {
        let blocking = BlockingSettingsStore()
        let harness = ChainHarness(ResolverChain(links: [
            QueryGateLink(), PolicyLink(policies: PolicyStore(try TablePolicy(blocked: ["blocked.test"])), blocking: blocking),
        ]))
        let before = try Packet.parse(try #require(try harness.run(try Packet.query("blocked.test"))))
        #expect(before.rcode == .noError)
        #expect(before.answers.map(\.ttl) == [10])
        blocking.replace(with: BlockingSettings(mode: .nxdomain, blockedTTL: 4))
        let after = try Packet.parse(try #require(try harness.run(try Packet.query("blocked.test"))))
        #expect(after.rcode == .nameError)
        #expect(after.authorities.map(\.ttl) == [4])
    }

    @Test func reconfiguring_the_cache_empties_it_and_applies_the_new_bounds() throws {
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 100))
        let second: UInt64 = 1_000_000_000
        func store(_ name: String, ttl: UInt32) throws {
            var query = DNSQuery()
            try query.parse(try Packet.query(name))
            guard case .miss(let promise) = cache.lookup(CacheKey(query), now: second, on: loop) else {
                Issue.record("\(name) must miss first")
                return
            }
            let reply = DNSMessage(
                header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: try DNSName(name), type: .a)],
                answers: [.a(try DNSName(name), ttl: ttl, IPv4Address(192, 0, 2, 1))])
            promise.succeed(.normalize(reply, question: OutgoingQuestion(query), receivedAt: second))
        }
        try store("a.test", ttl: 600)
        #expect(cache.count == 1)

        cache.reconfigure(CacheConfiguration(capacity: 2, maximumTTL: 30))
        #expect(cache.count == 0, "emptied, so every stored answer obeys the new bounds")
        #expect(cache.configuration == CacheConfiguration(capacity: 2, maximumTTL: 30))
        try store("b.test", ttl: 600)
        var query = DNSQuery()
        try query.parse(try Packet.query("b.test"))
        guard case .hit = cache.lookup(CacheKey(query), now: 20 * second, on: loop) else {
            Issue.record("within the new 30 s clamp it must hit")
            return
        }
        guard case .miss(let again) = cache.lookup(CacheKey(query), now: 40 * second, on: loop) else {
            Issue.record("past the new 30 s clamp it must be gone, though the upstream said 600 s")
            return
        }
        again.fail(CacheBypassed())  // the question is no longer in flight
        try store("c.test", ttl: 600)
        try store("d.test", ttl: 600)
        #expect(cache.count <= 2, "the new capacity holds")
    }
}
