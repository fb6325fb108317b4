import DNSWire
import NIOCore
import Testing
@testable import Upstream

/// Which datagram is the reply (RFC 5452 §9.1) and the 0x20 letter case a reply must echo.
@Suite struct ReplyMatchingTests {
    @Test func a_reply_echoing_another_letter_case_is_not_accepted() throws {
        let upstream = try SocketAddress(ipAddress: "127.0.0.1", port: 53)
        let sent = try DNSName("wWw.ExAmPlE.tEsT")
        let matcher = ReplyMatcher(
            upstream: upstream, id: 42, question: DNSQuestion(name: try DNSName("www.example.test"), type: .a),
            exactName: sent.wireBytes)
        func reply(_ name: String, id: UInt16 = 42) throws -> ByteBuffer {
            ByteBuffer(bytes: try DNSMessage(
                header: DNSHeader(id: id, isResponse: true), questions: [DNSQuestion(name: try DNSName(name), type: .a)]
            ).serialize())
        }
        guard case .accepted = matcher.check(try reply("wWw.ExAmPlE.tEsT"), from: upstream) else {
            Issue.record("the exact echo must be accepted")
            return
        }
        guard case .caseMismatch = matcher.check(try reply("www.example.test"), from: upstream) else {
            Issue.record("a lowercased echo must be a case mismatch")
            return
        }
        guard case .unwanted = matcher.check(try reply("wWw.ExAmPlE.tEsT", id: 43), from: upstream) else {
            Issue.record("another ID must be unwanted")
            return
        }
        guard case .unwanted = matcher.check(try reply("wWw.ExAmPlE.tEsT"), from: try SocketAddress(ipAddress: "127.0.0.2", port: 53)) else {
            Issue.record("another source must be unwanted")
            return
        }
    }

    @Test func case_randomization_changes_only_letters_and_varies() throws {
        let name = try DNSName("a1-b2_c3.example.test")
        var spellings = Set<[UInt8]>()
        for _ in 0..<64 {
            let random = CaseRandomizer.randomized(name)
            #expect(random == name)
            #expect(random.wireBytes.map { $0 | 0x20 } == name.wireBytes.map { $0 | 0x20 })
            spellings.insert(random.wireBytes)
        }
        #expect(spellings.count > 32)
    }
}
