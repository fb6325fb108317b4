import DNSWire
import Testing
@testable import Sinkhole

/// The reserved name `scrolloff doctor` probes when nothing is blocked (SPEC §11): answered as
/// blocked in every blocking mode, with TTL 0, by the sinkhole itself.
@Suite struct DoctorProbeNameTests {
    /// The chain ends after the canaries: a name that got past them would be answered REFUSED,
    /// so any other answer is the canary link's own.
    static func harness(mode: BlockingMode) -> ChainHarness {
        ChainHarness(ResolverChain(links: [QueryGateLink(), CanaryLink(blocking: BlockingSettingsStore(mode: mode))]))
    }

    @Test(arguments: [
        (BlockingMode.null, DNSRcode.noError, [DNSRData.a(.any)]),
        (.nxdomain, .nameError, []),
        (.refused, .refused, []),
    ] as [(BlockingMode, DNSRcode, [DNSRData])])
    func the_reserved_probe_name_gets_the_blocked_answer_of_the_mode(mode: BlockingMode, rcode: DNSRcode, answers: [DNSRData]) throws {
        let query = try Packet.query("Doctor-Probe.scrolloff.INVALID", .a, edns: EDNS(udpPayloadSize: 1232))
        let message = try Packet.parse(try #require(try Self.harness(mode: mode).run(query)))
        #expect(message.rcode == rcode)
        #expect(message.answers.map(\.rdata) == answers)
        #expect((message.answers + message.authorities).allSatisfy { $0.ttl == 0 }, "never cached on the way")
        if mode != .refused { #expect(message.edns?.extendedErrors.map(\.infoCode) == [.blocked]) }
    }

    @Test func names_under_and_beside_the_probe_name_are_not_answered_by_it() throws {
        for name in ["x.doctor-probe.scrolloff.invalid", "scrolloff.invalid", "doctor-probe.scrolloff.invalid.example"] {
            let message = try Packet.parse(try #require(try Self.harness(mode: .null).run(try Packet.query(name))))
            #expect(message.rcode == .refused, "\(name) went past the canary link")
        }
    }
}
