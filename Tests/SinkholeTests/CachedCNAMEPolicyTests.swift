import DNSWire
import NIOCore
import Testing
@testable import Sinkhole

/// SPEC §9 CNAME inspection on the chain's cache-hit path: the cache link replays a stored answer
/// under the policy the policy link read for this very query (`QueryContext.policy`), so a rule
/// change applies to the next cache hit, and a chain through a blocked name is never replayed.
@Suite struct CachedCNAMEPolicyTests {
    /// Answers every question with a CNAME to edge.tracker.test and its address, as an upstream would.
    struct CNAMEUpstream: ResolverLink {
        func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
            let question = OutgoingQuestion(context.query)
            let name = (try? DNSName(wireBytes: question.name)) ?? .root
            let edge = (try? DNSName("edge.tracker.test")) ?? .root
            let reply = DNSMessage(
                header: DNSHeader(id: 1, isResponse: true, recursionDesired: true, recursionAvailable: true),
                questions: [DNSQuestion(name: name, type: .a)],
                answers: [
                    DNSRecord(name: name, type: .cname, ttl: 300, rdata: .cname(edge)),
                    .a(edge, ttl: 300, IPv4Address(10, 9, 9, 9)),
                ])
            let answer = CachedAnswer.normalize(reply, question: question, receivedAt: NIODeadline.now().uptimeNanoseconds)
            return .upstream(context.eventLoop.makeSucceededFuture(answer))
        }
    }

    @Test func a_cache_hit_whose_cname_runs_through_a_newly_blocked_name_is_answered_as_blocked() throws {
        let policies = PolicyStore(try TablePolicy(blocked: []))
        let blocking = BlockingSettingsStore(mode: .null)
        let harness = ChainHarness(ResolverChain(links: [
            QueryGateLink(), PolicyLink(policies: policies, blocking: blocking),
            CacheLink(cache: AnswerCache(), policies: policies, blocking: blocking), CNAMEUpstream(),
        ]))
        let packet = try Packet.query("innocent.test")
        func answer() throws -> (message: DNSMessage, route: QueryRoute) {
            harness.context.route = .local
            let message = try Packet.parse(try #require(try harness.run(packet)))
            return (message, harness.context.route)
        }

        // Forwarded once, then a cache hit with the whole chain.
        #expect(try answer().message.answers.count == 2)
        let open = try answer()
        #expect(open.route == .cached)
        #expect(open.message.answers.count == 2)

        // The target's domain is blocked now: the same cache entry is answered as blocked.
        policies.replace(with: try TablePolicy(blocked: ["tracker.test"]))
        let blocked = try answer()
        #expect(blocked.route == .blocked)
        #expect(blocked.message.answers.map(\.rdata) == [.a(.any)])
        #expect(blocked.message.answers.allSatisfy { $0.ttl <= PolicyDecision.maximumBlockedTTL })

        // And open again once the rule is gone: no policy outlives its query in the context.
        policies.replace(with: try TablePolicy(blocked: []))
        let reopened = try answer()
        #expect(reopened.route == .cached)
        #expect(reopened.message.answers.count == 2)
    }
}
