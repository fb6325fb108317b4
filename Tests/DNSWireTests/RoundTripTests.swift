import DNSWire
import Testing

private func name(_ text: String) throws -> DNSName { try DNSName(text) }

private func response(to question: DNSQuestion, id: UInt16 = 0xBEEF) -> DNSMessage {
    DNSMessage(
        header: DNSHeader(id: id, isResponse: true, recursionDesired: true, recursionAvailable: true),
        questions: [question])
}

@Test func cname_chain_response_round_trips_and_compresses() throws {
    var message = response(to: DNSQuestion(name: try name("www.example.com"), type: .a))
    message.answers = [
        DNSRecord(name: try name("www.example.com"), type: .cname, ttl: 300, rdata: .cname(try name("edge.example.net"))),
        DNSRecord(name: try name("edge.example.net"), type: .cname, ttl: 60, rdata: .cname(try name("e1.cdn.example.net"))),
        .a(try name("e1.cdn.example.net"), ttl: 20, IPv4Address(192, 0, 2, 1)),
        .a(try name("e1.cdn.example.net"), ttl: 20, IPv4Address(192, 0, 2, 2)),
    ]
    let bytes = try roundTrip(message)
    // The first answer's owner is the question name: a pointer to offset 12 (RFC 1035 §4.1.4).
    let firstAnswer = 12 + (try wire("www.example.com")).count + 4
    #expect(Array(bytes[firstAnswer..<firstAnswer + 2]) == [0xC0, 0x0C])
    // Uncompressed it would repeat every name in full.
    let uncompressed = 12 + 21 + (17 + 10 + 18) + (18 + 10 + 20) + 2 * (20 + 10 + 4)
    #expect(bytes.count < uncompressed / 2 + 40)
}

@Test func nxdomain_with_soa_round_trips() throws {
    var message = response(to: DNSQuestion(name: try name("nope.example.com"), type: .aaaa))
    message.rcode = .nameError
    message.authorities = [
        DNSRecord(
            name: try name("example.com"), type: .soa, ttl: 900,
            rdata: .soa(SOAData(
                primaryNameServer: try name("ns1.example.com"), responsibleMailbox: try name("hostmaster.example.com"),
                serial: 2_024_010_101, refresh: 7200, retry: 3600, expire: 1_209_600, minimum: 300)))
    ]
    try roundTrip(message)
}

@Test func https_and_svcb_records_stay_opaque() throws {
    // RFC 9460 SvcParams: priority 1, target ".", alpn=h2.
    let rdata: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x03, 0x02, 0x68, 0x32]
    var message = response(to: DNSQuestion(name: try name("example.org"), type: .https))
    message.answers = [
        DNSRecord(name: try name("example.org"), type: .https, ttl: 300, rdata: .unknown(rdata)),
        DNSRecord(name: try name("_dns.example.org"), type: .svcb, ttl: 300, rdata: .unknown(rdata)),
    ]
    let bytes = try roundTrip(message)
    let parsed = try DNSMessage(parsing: bytes)
    #expect(parsed.answers.first?.rdata == .unknown(rdata))
}

@Test func mx_txt_ns_ptr_and_aaaa_round_trip() throws {
    var message = response(to: DNSQuestion(name: try name("example.net"), type: .mx))
    message.answers = [
        DNSRecord(name: try name("example.net"), type: .mx, ttl: 300, rdata: .mx(preference: 10, exchange: try name("mail.example.net"))),
        DNSRecord(name: try name("example.net"), type: .txt, ttl: 300, rdata: .txt([Array("v=spf1 -all".utf8), [], [0, 255]])),
        DNSRecord(name: try name("1.2.0.192.in-addr.arpa"), type: .ptr, ttl: 300, rdata: .ptr(try name("host.example.net"))),
    ]
    message.authorities = [DNSRecord(name: try name("example.net"), type: .ns, ttl: 300, rdata: .ns(try name("ns.example.net")))]
    message.additionals = [.aaaa(try name("mail.example.net"), ttl: 300, try #require(IPv6Address("2001:db8::25")))]
    try roundTrip(message)
}

@Test func a_record_outside_class_IN_is_opaque() throws {
    // RFC 1035 §3.4: A's layout is defined for IN only; CHAOS A carries a domain and an address.
    var message = response(to: DNSQuestion(name: try name("version.bind"), type: .a, class: .chaos))
    message.answers = [DNSRecord(name: try name("version.bind"), type: .a, class: .chaos, ttl: 0, rdata: .unknown([1, 0x61, 0, 0, 7]))]
    try roundTrip(message)
}

@Test func every_header_flag_round_trips() throws {
    let header = DNSHeader(
        id: 0xFFFF, isResponse: true, opcode: .update, authoritative: true, truncated: true, recursionDesired: true,
        recursionAvailable: true, zero: true, authenticData: true, checkingDisabled: true)
    let bytes = try roundTrip(DNSMessage(header: header, rcode: .refused))
    #expect(Array(bytes[2..<4]) == [0xAF, 0xF5])
}

@Test func rdata_case_not_matching_type_is_refused_by_the_writer() throws {
    var message = response(to: DNSQuestion(name: .root, type: .a))
    message.answers = [DNSRecord(name: .root, type: .a, ttl: 1, rdata: .cname(.root))]
    #expect(throws: DNSWireError.rdataMismatch(type: .a)) { try message.serialize() }
    message.answers = [DNSRecord(name: .root, type: .a, ttl: 1, rdata: .unknown([1, 2, 3, 4]))]
    #expect(throws: DNSWireError.rdataMismatch(type: .a)) { try message.serialize() }
}

@Test func txt_string_over_255_octets_is_refused() {
    var message = response(to: DNSQuestion(name: .root, type: .txt))
    message.answers = [DNSRecord(name: .root, type: .txt, ttl: 1, rdata: .txt([Array(repeating: 0x61, count: 256)]))]
    #expect(throws: DNSWireError.rdataTooLarge(type: .txt)) { try message.serialize() }
}

@Test func names_past_offset_16383_still_compress_backward_and_round_trip() throws {
    // Pointers have 14 bits; names written after 0x3FFF may point back but cannot be targets.
    var message = response(to: DNSQuestion(name: try name("big.example"), type: .txt))
    message.answers = [DNSRecord(name: try name("big.example"), type: DNSType(65280), ttl: 1, rdata: .unknown(Array(repeating: 7, count: 17_000)))]
    for index in 0..<20 {
        message.answers.append(.a(try name("host\(index % 4).far.example"), ttl: 1, IPv4Address(rawValue: UInt32(index))))
    }
    let bytes = try roundTrip(message)
    #expect(bytes.count > 17_000)
}

@Test func message_over_65535_octets_is_refused() throws {
    var message = response(to: DNSQuestion(name: .root, type: .txt))
    let chunk = DNSRecord(name: .root, type: DNSType(65280), ttl: 1, rdata: .unknown(Array(repeating: 1, count: 60_000)))
    message.answers = [chunk, chunk]
    #expect(throws: DNSWireError.self) { try message.serialize() }
}

@Test func seed_corpus_packets_parse_and_round_trip() throws {
    let directory = #filePath.split(separator: "/").dropLast().joined(separator: "/")
    let names = [
        "query-a.bin", "query-aaaa-cookie.bin", "query-https-edns-do.bin", "response-blocked-ede.bin",
        "response-cname-chain.bin", "response-https.bin", "response-mx-txt.bin", "response-nxdomain-soa.bin",
    ]
    for file in names {
        let bytes = try readFile("/" + directory + "/corpus/" + file)
        let message = try DNSMessage(parsing: bytes)
        try roundTrip(message)
        #expect(!message.questions.isEmpty, "\(file)")
    }
}
