import DNSWire
import Synchronization
import Testing
@testable import Sinkhole

/// Where a replaced policy is freed (SPEC §9: a list refresh never stalls answers): a policy
/// holds the matcher, tens of MB for a large list, and whoever drops its last reference frees it.
@Suite struct PolicyLifetimeTests {
    /// A policy whose release can be observed; it blocks `blocked.test` so both chain paths run.
    final class TrackedPolicy: QueryPolicy {
        func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
            lowercasedName == (try? DNSName("blocked.test").wireBytes) ? .blocked(ttlCap: 10) : .allowed
        }
    }

    /// Before the fix the query context kept the policy of its last query until its next one, so
    /// after a replace the last reference, and the free, was the event loop's.
    @Test(arguments: ["allowed.test", "blocked.test"])
    func a_replaced_policy_is_not_kept_by_the_context_that_last_used_it(name: String) throws {
        weak var replaced: TrackedPolicy?
        let policies: PolicyStore = {
            let policy = TrackedPolicy()
            replaced = policy
            return PolicyStore(policy)
        }()
        let harness = ChainHarness(ResolverChain(links: [
            QueryGateLink(), PolicyLink(policies: policies, blocking: BlockingSettingsStore()), AnswerLink(),
        ]))
        _ = try harness.run(try Packet.query(name))
        #expect(replaced != nil, "the store still holds it")
        policies.replace(with: AllowAllPolicy())
        #expect(replaced == nil, "the query context still holds the policy its last query used")
    }

    /// Answers every query that reaches it with an empty NOERROR, as a link after the policy would.
    struct AnswerLink: ResolverLink {
        func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
            LocalAnswer.writeEmpty(into: &context.builder, query: context.query, rcode: .noError, limit: context.replyLimit)
            return .builtReply
        }
    }
}
