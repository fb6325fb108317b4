import DNSWire
import Testing

private func cnameReply() throws -> DNSMessage {
    DNSMessage(
        header: DNSHeader(id: 1, isResponse: true, recursionDesired: true, recursionAvailable: true),
        questions: [DNSQuestion(name: try DNSName("www.example.com"), type: .a)],
        answers: [
            DNSRecord(name: try DNSName("www.example.com"), type: .cname, ttl: 300, rdata: .cname(try DNSName("edge.example.net"))),
            .a(try DNSName("edge.example.net"), ttl: 20, IPv4Address(192, 0, 2, 1)),
        ],
        additionals: [.a(try DNSName("ns.example.net"), ttl: 3600, IPv4Address(192, 0, 2, 53))],
        edns: EDNS(dnssecOK: true))
}

@Test func layout_finds_every_ttl_but_opt() throws {
    let bytes = try cnameReply().serialize()
    let layout = try DNSMessageLayout(parsing: bytes)
    #expect(layout.ttlFields.map(\.section) == [.answer, .answer, .additional])
    #expect(layout.questionNameEnd == 12 + 17)
}

@Test func aging_and_capping_rewrite_ttls_in_place() throws {
    var bytes = try cnameReply().serialize()
    let layout = try DNSMessageLayout(parsing: bytes)
    layout.age(&bytes, by: 25)
    DNSMessageLayout.setID(0xCAFE, in: &bytes)
    var aged = try DNSMessage(parsing: bytes)
    #expect(aged.header.id == 0xCAFE)
    #expect(aged.answers.map(\.ttl) == [275, 0])
    #expect(aged.additionals.map(\.ttl) == [3575])
    #expect(aged.edns?.dnssecOK == true, "OPT flags untouched")
    layout.cap(&bytes, at: 10)
    aged = try DNSMessage(parsing: bytes)
    #expect(aged.answers.map(\.ttl) == [10, 0])
    #expect(aged.additionals.map(\.ttl) == [10])
}

@Test func layout_rejects_what_the_parser_rejects() throws {
    let packet = try hex("""
        12 34 81 80  00 01 00 01 00 00 00 00
        00 00 01 00 01
        00 00 01 00 01 00 00 00 3C 00 0A C0 00 02 01   # RDLENGTH 10, 4 octets left
        """)
    #expect(throws: DNSWireError.rdataPastEnd(offset: 26, rdlength: 10, available: 4)) { try DNSMessageLayout(parsing: packet) }
    #expect(throws: DNSWireError.pointerNotBackward(offset: 12, target: 12)) {
        try DNSMessageLayout(parsing: hex("12 34 01 00 00 01 00 00 00 00 00 00 C0 0C 00 01 00 01"))
    }
}

@Test func cache_ttl_positive_is_the_smallest_answer_ttl() throws {
    #expect(try cnameReply().cacheTTL == 20)
}

@Test func cache_ttl_negative_is_min_of_soa_ttl_and_minimum() throws {
    let soa = SOAData(primaryNameServer: .root, responsibleMailbox: .root, serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 300)
    var message = DNSMessage(header: DNSHeader(isResponse: true), rcode: .nameError)
    message.authorities = [DNSRecord(name: .root, type: .soa, ttl: 900, rdata: .soa(soa))]
    #expect(message.cacheTTL == 300)
    message.authorities[0].ttl = 60
    #expect(message.cacheTTL == 60)
    message.authorities = []
    #expect(message.cacheTTL == nil, "RFC 2308 §5: no SOA, no negative caching")
    message.rcode = .serverFailure
    #expect(message.cacheTTL == nil)
}

@Test func ttl_with_top_bit_set_counts_as_zero() throws {
    var message = try cnameReply()
    message.answers[0].ttl = 0x8000_0001
    #expect(message.cacheTTL == 0)
}
