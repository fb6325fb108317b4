import DNSWire
import Testing
@testable import Sinkhole

/// The gate of SPEC §9 and RFC 6891, ahead of everything else in the chain.
@Suite struct QueryGateTests {
    /// A chain with nothing after the gate answers REFUSED to every well-formed query, so a
    /// REFUSED shows the packet passed the gate.
    static func harness() -> ChainHarness { ChainHarness(ResolverChain(links: [QueryGateLink()])) }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var packet: [UInt8]
        /// nil: dropped.
        var rcode: DNSRcode?
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "empty packet is dropped", packet: [], rcode: nil),
        Case(label: "11-octet packet is dropped", packet: Array(repeating: 0, count: 11), rcode: nil),
        Case(label: "a response (QR=1) is dropped", packet: Packet.hex("""
            1234 8100 0001 0000 0000 0000   # QR set
            07 6578616d706c65 03 636f6d 00 0001 0001
            """), rcode: nil),
        Case(label: "opcode STATUS gets NOTIMP", packet: Packet.hex("""
            1234 1100 0001 0000 0000 0000   # opcode 2
            07 6578616d706c65 03 636f6d 00 0001 0001
            """), rcode: .notImplemented),
        Case(label: "two questions get FORMERR", packet: Packet.hex("""
            1234 0100 0002 0000 0000 0000
            01 61 00 0001 0001
            01 62 00 0001 0001
            """), rcode: .formatError),
        Case(label: "no question gets FORMERR", packet: Packet.hex("1234 0100 0000 0000 0000 0000"), rcode: .formatError),
        Case(label: "a self-pointing name gets FORMERR", packet: Packet.hex("""
            1234 0100 0001 0000 0000 0000
            c00c 0001 0001                  # pointer to itself
            """), rcode: .formatError),
        Case(label: "a question cut short gets FORMERR", packet: Packet.hex("""
            1234 0100 0001 0000 0000 0000
            07 6578616d                     # label longer than the packet
            """), rcode: .formatError),
        Case(label: "ARCOUNT past the end gets FORMERR", packet: Packet.hex("""
            1234 0100 0001 0000 0000 ffff
            01 61 00 0001 0001
            """), rcode: .formatError),
        Case(label: "two OPT records get FORMERR", packet: Packet.hex("""
            1234 0100 0001 0000 0000 0002
            01 61 00 0001 0001
            00 0029 04d0 00000000 0000      # OPT
            00 0029 04d0 00000000 0000      # OPT again
            """), rcode: .formatError),
        Case(label: "EDNS version 1 gets BADVERS", packet: Packet.hex("""
            1234 0100 0001 0000 0000 0001
            01 61 00 0001 0001
            00 0029 04d0 00010000 0000      # version 1
            """), rcode: .badVersion),
        Case(label: "AXFR gets NOTIMP", packet: Packet.hex("""
            1234 0000 0001 0000 0000 0000
            01 61 00 00fc 0001
            """), rcode: .notImplemented),
        Case(label: "a plain query passes", packet: Packet.hex("""
            1234 0100 0001 0000 0000 0000
            01 61 00 0001 0001
            """), rcode: .refused),
    ]

    @Test(arguments: cases)
    func gate(c: Case) throws {
        let reply = try Self.harness().run(c.packet)
        guard let rcode = c.rcode else {
            #expect(reply == nil)
            return
        }
        let bytes = try #require(reply)
        let message = try Packet.parse(bytes)
        #expect(message.rcode == rcode)
        #expect(message.header.isResponse)
        #expect(message.header.id == 0x1234)
    }

    @Test func badvers_reply_carries_an_opt_with_version_0() throws {
        let packet = try Packet.query("example.com", edns: EDNS(version: 3))
        let message = try Packet.parse(try #require(try Self.harness().run(packet)))
        #expect(message.rcode == .badVersion)
        #expect(message.edns?.version == 0)
        #expect(message.questions.first?.name == (try DNSName("example.com")))
    }

    @Test func random_packets_never_stop_the_chain() throws {
        let harness = Self.harness()
        var generator = SystemRandomNumberGenerator()
        for length in 0..<600 {
            var packet = (0..<(length % 300)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length.isMultiple(of: 2), packet.count > 5 {
                packet[2] &= 0x07  // a plausible query header, so the parser runs
                packet[4] = 0
                packet[5] = 1
            }
            if let reply = try harness.run(packet) {
                #expect(reply.count >= 12)
            }
        }
        // Still answering afterwards.
        let reply = try #require(try harness.run(try Packet.query("after.test")))
        #expect(try Packet.parse(reply).rcode == .refused)
    }
}

/// RFC 4892's identity questions and every class other than IN stop at the gate with REFUSED:
/// a forwarded `version.bind CH TXT` told any LAN device the upstream's software and identity.
@Suite struct QueryGateClassTests {
    /// Stands for the rest of the chain (policy, cache, forwarder): counts what reaches it.
    final class Downstream: ResolverLink, @unchecked Sendable {
        var reached: [String] = []
        func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
            reached.append(context.query.question.name.description)
            LocalAnswer.writeEmpty(into: &context.builder, query: context.query, rcode: .noError, limit: context.replyLimit)
            return .builtReply
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var type: DNSType
        var `class`: DNSClass
        var testDescription: String { "\(name) \(self.class) \(type)" }
    }

    static let refused: [Case] = [
        Case(name: "version.bind", type: .txt, class: .chaos),
        Case(name: "hostname.bind", type: .txt, class: .chaos),
        Case(name: "id.server", type: .txt, class: .chaos),
        Case(name: "version.server", type: .txt, class: .chaos),
        Case(name: "authors.bind", type: .txt, class: .chaos),
        Case(name: "VERSION.BIND", type: .a, class: .chaos),
        Case(name: "instagram.com", type: .a, class: .hesiod),
        Case(name: "instagram.com", type: .a, class: .any),
        Case(name: "instagram.com", type: .a, class: .none),
        Case(name: "instagram.com", type: .a, class: DNSClass(0)),
        Case(name: "instagram.com", type: .a, class: DNSClass(0xFFFF)),
    ]

    @Test(arguments: refused)
    func a_question_outside_class_in_is_refused_at_the_gate_and_never_passed_on(c: Case) throws {
        let downstream = Downstream()
        let harness = ChainHarness(ResolverChain(links: [QueryGateLink(), downstream]))
        for transport in [DNSTransport.udp, .tcp] {
            let packet = try Packet.query(c.name, c.type, edns: EDNS(), class: c.class)
            let message = try Packet.parse(try #require(try harness.run(packet, transport: transport)))
            #expect(message.rcode == .refused)
            #expect(message.header.isResponse && message.header.id == 0x1234)
            #expect(message.answers.isEmpty)
            // The question is echoed as asked, class included, so the client can match the reply.
            #expect(message.questions.first?.class == c.class && message.questions.first?.type == c.type)
        }
        #expect(downstream.reached.isEmpty, "\(downstream.reached)")
    }

    @Test func the_same_names_in_class_in_still_pass_the_gate() throws {
        let downstream = Downstream()
        let harness = ChainHarness(ResolverChain(links: [QueryGateLink(), downstream]))
        for name in ["version.bind", "id.server", "instagram.com"] {
            let message = try Packet.parse(try #require(try harness.run(try Packet.query(name, .txt))))
            #expect(message.rcode == .noError)
        }
        #expect(downstream.reached.count == 3, "\(downstream.reached)")
    }
}
