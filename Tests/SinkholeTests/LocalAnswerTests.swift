import DNSWire
import Testing
@testable import Sinkhole

/// Blocking answers and canaries (SPEC §9).
@Suite struct LocalAnswerTests {
    static func harness(mode: BlockingMode = .null, doh: [String] = []) throws -> ChainHarness {
        let policy = try TablePolicy(blocked: ["blocked.test"])
        return ChainHarness(ResolverChain(links: [
            QueryGateLink(),
            CanaryLink(dohEndpoints: try suffixMatcher(doh), blocking: BlockingSettingsStore(mode: mode)),
            PolicyLink(policies: PolicyStore(policy), blocking: BlockingSettingsStore(mode: mode)),
        ]))
    }

    static let edns = EDNS(udpPayloadSize: 1232)

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var type: DNSType
        var mode: BlockingMode
        var rcode: DNSRcode
        var answer: DNSRData?
        var soa: Bool
        var testDescription: String { "\(mode) \(name) \(type)" }
    }

    static let cases: [Case] = [
        Case(name: "blocked.test", type: .a, mode: .null, rcode: .noError, answer: .a(.any), soa: false),
        Case(name: "www.Blocked.TEST", type: .a, mode: .null, rcode: .noError, answer: .a(.any), soa: false),
        Case(name: "a.b.blocked.test", type: .aaaa, mode: .null, rcode: .noError, answer: .aaaa(.any), soa: false),
        Case(name: "blocked.test", type: .https, mode: .null, rcode: .noError, answer: nil, soa: true),
        Case(name: "mail.blocked.test", type: .mx, mode: .null, rcode: .noError, answer: nil, soa: true),
        Case(name: "blocked.test", type: .txt, mode: .null, rcode: .noError, answer: nil, soa: true),
        Case(name: "blocked.test", type: .a, mode: .nxdomain, rcode: .nameError, answer: nil, soa: true),
        Case(name: "blocked.test", type: .aaaa, mode: .nxdomain, rcode: .nameError, answer: nil, soa: true),
        Case(name: "blocked.test", type: .a, mode: .refused, rcode: .refused, answer: nil, soa: false),
    ]

    @Test(arguments: cases)
    func blocked_answer(c: Case) throws {
        let reply = try #require(try Self.harness(mode: c.mode).run(try Packet.query(c.name, c.type, edns: Self.edns)))
        let message = try Packet.parse(reply)
        #expect(message.rcode == c.rcode)
        #expect(message.answers.map(\.rdata) == (c.answer.map { [$0] } ?? []))
        #expect(message.answers.allSatisfy { $0.ttl <= 10 })
        #expect(message.authorities.contains { $0.type == .soa } == c.soa)
        #expect(message.authorities.allSatisfy { $0.ttl <= 10 })
        #expect(message.edns?.extendedErrors.map(\.infoCode) == [.blocked])
        // The question is echoed with the client's spelling (0x20).
        #expect(message.questions.first?.name.description == c.name)
    }

    @Test func blocked_answer_without_edns_has_no_opt_and_no_ede() throws {
        let reply = try #require(try Self.harness().run(try Packet.query("blocked.test", .a)))
        let message = try Packet.parse(reply)
        #expect(message.edns == nil)
        #expect(message.answers.first?.rdata == .a(.any))
    }

    @Test func the_parent_and_lookalikes_of_a_blocked_name_are_not_blocked() throws {
        for name in ["test", "notblocked.test", "blocked.test.example"] {
            let message = try Packet.parse(try #require(try Self.harness().run(try Packet.query(name))))
            // REFUSED is the end of this test chain: the name went past the policy.
            #expect(message.rcode == .refused, "\(name)")
        }
    }

    struct Canary: Sendable, CustomTestStringConvertible {
        var name: String
        var rcode: DNSRcode
        var testDescription: String { name }
    }

    @Test(arguments: [
        Canary(name: "use-application-dns.net", rcode: .nameError),
        Canary(name: "USE-application-dns.NET", rcode: .nameError),
        Canary(name: "mask.icloud.com", rcode: .nameError),
        Canary(name: "mask-h2.icloud.com", rcode: .nameError),
        Canary(name: "resolver.arpa", rcode: .noError),
        Canary(name: "_dns.resolver.arpa", rcode: .noError),
        Canary(name: "_DNS.Resolver.ARPA", rcode: .noError),
    ])
    func canary(c: Canary) throws {
        for type in [DNSType.a, .aaaa, .svcb] {
            let message = try Packet.parse(try #require(try Self.harness().run(try Packet.query(c.name, type))))
            #expect(message.rcode == c.rcode)
            #expect(message.answers.isEmpty)
        }
    }

    @Test func doh_endpoints_from_the_list_are_blocked_with_subdomains() throws {
        let harness = try Self.harness(doh: ["dns.example"])
        let message = try Packet.parse(try #require(try harness.run(try Packet.query("doh.dns.example", .a, edns: Self.edns))))
        #expect(message.answers.first?.rdata == .a(.any))
        #expect(message.edns?.extendedErrors.map(\.infoCode) == [.blocked])
    }

    @Test func a_policy_swap_applies_to_the_next_query() throws {
        let store = PolicyStore(try TablePolicy(blocked: []))
        let harness = ChainHarness(ResolverChain(links: [QueryGateLink(), PolicyLink(policies: store, blocking: BlockingSettingsStore(mode: .null))]))
        let packet = try Packet.query("late.test")
        #expect(try Packet.parse(try #require(try harness.run(packet))).rcode == .refused)
        store.replace(with: try TablePolicy(blocked: ["late.test"]))
        #expect(try Packet.parse(try #require(try harness.run(packet))).answers.first?.rdata == .a(.any))
    }
}
