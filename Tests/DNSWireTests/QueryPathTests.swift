import DNSWire
import Testing

// The server's per-query path: gate → DNSQuery → DNSResponseBuilder (SPEC §9).

@Test(arguments: [
    ("query", "12 34 01 00 00 01 00 00 00 00 00 00", DNSGateDecision.proceed),
    ("response (QR=1) is dropped", "12 34 81 00 00 01 00 00 00 00 00 00", .drop),
    ("QR=1 with a bad opcode is still dropped", "12 34 A8 00 00 01 00 00 00 00 00 00", .drop),
    ("opcode NOTIFY", "12 34 20 00 00 01 00 00 00 00 00 00", .reply(.notImplemented)),
    ("opcode UPDATE", "12 34 28 00 00 01 00 00 00 00 00 00", .reply(.notImplemented)),
    ("opcode 15", "12 34 78 00 00 01 00 00 00 00 00 00", .reply(.notImplemented)),
    ("no question", "12 34 01 00 00 00 00 00 00 00 00 00", .reply(.formatError)),
    ("two questions", "12 34 01 00 00 02 00 00 00 00 00 00", .reply(.formatError)),
    ("257 questions", "12 34 01 00 01 01 00 00 00 00 00 00", .reply(.formatError)),
    ("11 octets", "12 34 01 00 00 01 00 00 00 00 00", .drop),
])
func gate_decides_from_the_header(why: String, packet: String, expected: DNSGateDecision) throws {
    #expect(DNSQueryGate.decide(try hex(packet)) == expected, "\(why)")
}

private func query(_ name: String, _ type: DNSType, id: UInt16 = 0xABCD, edns: EDNS? = nil) throws -> [UInt8] {
    try DNSMessage(
        header: DNSHeader(id: id, recursionDesired: true, checkingDisabled: true),
        questions: [DNSQuestion(name: DNSName(name), type: type)], edns: edns
    ).serialize()
}

@Test func fast_path_keeps_the_case_and_lowercases_the_key() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("WwW.TikTok.CoM", .aaaa))
    #expect(parsed.name == (try wire("WwW.TikTok.CoM")))
    #expect(parsed.lowercasedName == (try wire("www.tiktok.com")))
    #expect(parsed.type == .aaaa)
    #expect(parsed.class == .in)
    #expect(parsed.header.id == 0xABCD)
    #expect(parsed.edns == nil)
    #expect(parsed.optCount == 0)
    #expect(parsed.udpReplyLimit() == 512)
    #expect(DNSQuestionKey(parsed) == DNSQuestionKey(DNSQuestion(name: try DNSName("www.tiktok.com"), type: .aaaa)))
}

@Test func fast_path_reads_the_opt_record() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("example.org", .https, edns: EDNS(udpPayloadSize: 4096, version: 1, dnssecOK: true)))
    #expect(parsed.edns == EDNSQueryInfo(udpPayloadSize: 4096, version: 1, dnssecOK: true))
    #expect(parsed.optCount == 1)
    #expect(parsed.udpReplyLimit() == 1232)
    try parsed.parse(query("example.org", .a, edns: EDNS(udpPayloadSize: 100)))
    #expect(parsed.udpReplyLimit() == 512, "RFC 6891 §6.2.5: below 512 counts as 512")
    try parsed.parse(query("example.org", .a))
    #expect(parsed.edns == nil, "state from the previous packet is cleared")
}

@Test func fast_path_refuses_more_than_one_question() throws {
    var parsed = DNSQuery()
    #expect(throws: DNSWireError.questionCount(0)) { try parsed.parse(hex("12 34 01 00 00 00 00 00 00 00 00 00")) }
}

@Test func blocked_a_reply_carries_zero_address_ttl_and_ede() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("TikTok.com", .a, edns: EDNS(udpPayloadSize: 1232)))
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: parsed, rcode: .noError)
    try builder.appendAnswerA(ttl: 10, .any)
    try builder.finish(edns: EDNS(), extendedErrors: [ExtendedDNSError(infoCode: .blocked)], limit: parsed.udpReplyLimit())
    let reply = try DNSMessage(parsing: builder.bytes)
    #expect(reply.header.id == 0xABCD)
    #expect(reply.header.isResponse && reply.header.recursionDesired && reply.header.checkingDisabled)
    #expect(reply.questions.first?.name.description == "TikTok.com", "question echoed with its case")
    #expect(reply.answers == [.a(try DNSName("tiktok.com"), ttl: 10, .any)])
    #expect(reply.edns?.extendedErrors == [ExtendedDNSError(infoCode: .blocked)])
    // The owner is a pointer to the question: the whole reply stays small.
    #expect(builder.bytes.count == 12 + 16 + 16 + 11 + 6)
}

@Test func nodata_reply_has_soa_in_authority() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("tiktok.com", .https))
    let zone = try DNSName("tiktok.com")
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: parsed, rcode: .noError, authoritative: true)
    let soa = SOAData(primaryNameServer: zone, responsibleMailbox: try DNSName("blocked.scrolloff"), serial: 1, refresh: 60, retry: 60, expire: 60, minimum: 10)
    try builder.appendAuthority(DNSRecord(name: zone, type: .soa, ttl: 10, rdata: .soa(soa)))
    try builder.finish(edns: nil)
    let reply = try DNSMessage(parsing: builder.bytes)
    #expect(reply.answers.isEmpty)
    #expect(reply.authorities.map(\.rdata) == [.soa(soa)])
    #expect(reply.header.authoritative)
    #expect(reply.edns == nil)
}

@Test func answers_after_authority_are_refused() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("a.example", .a))
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: parsed, rcode: .noError)
    try builder.appendAuthority(DNSRecord(name: .root, type: .ns, ttl: 1, rdata: .ns(.root)))
    #expect(throws: DNSWireError.sectionOutOfOrder) { try builder.appendAnswerA(ttl: 1, .any) }
}

@Test func badvers_needs_an_opt_record() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("a.example", .a, edns: EDNS(version: 1)))
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: parsed, rcode: .badVersion)
    #expect(throws: DNSWireError.extendedRcodeWithoutEDNS(rcode: .badVersion)) { try builder.finish(edns: nil) }
    builder.start(replyingTo: parsed, rcode: .badVersion)
    try builder.finish(edns: EDNS())
    #expect(try DNSMessage(parsing: builder.bytes).rcode == .badVersion)
}

@Test func error_reply_copies_id_opcode_and_rd_only() throws {
    var builder = DNSResponseBuilder()
    builder.startError(replyingToHeaderOf: try hex("BE EF 29 00 00 01 00 00 00 00 00 00 FF FF"), rcode: .notImplemented)
    try builder.finish(edns: nil)
    #expect(toHex(builder.bytes) == "beef"+"a984"+"0000"+"0000"+"0000"+"0000")
}

@Test func builder_truncates_to_the_limit_keeping_question_and_opt_and_setting_tc() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("many.example", .a, edns: EDNS(udpPayloadSize: 512)))
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: parsed, rcode: .noError)
    for index in 0..<40 { try builder.appendAnswerA(ttl: 60, IPv4Address(rawValue: UInt32(index))) }
    try builder.finish(edns: EDNS(), extendedErrors: [ExtendedDNSError(infoCode: .blocked)], limit: parsed.udpReplyLimit())
    #expect(builder.bytes.count <= 512)
    let reply = try DNSMessage(parsing: builder.bytes)
    #expect(reply.header.truncated)
    #expect(reply.answers.isEmpty)
    #expect(reply.questions == [DNSQuestion(name: try DNSName("many.example"), type: .a)])
    #expect(reply.edns?.extendedErrors == [ExtendedDNSError(infoCode: .blocked)])
}

@Test func builder_drops_additional_records_before_setting_tc() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("fits.example", .a))
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: parsed, rcode: .noError)
    try builder.appendAnswerA(ttl: 60, IPv4Address(192, 0, 2, 1))
    let filler = DNSRecord(name: try DNSName("glue.example"), type: .txt, ttl: 1, rdata: .txt([Array(repeating: 0x61, count: 255), Array(repeating: 0x62, count: 255)]))
    try builder.appendAdditional(filler)
    try builder.finish(edns: nil, limit: 512)
    let reply = try DNSMessage(parsing: builder.bytes)
    #expect(!reply.header.truncated)
    #expect(reply.answers.count == 1)
    #expect(reply.additionals.isEmpty)
}

@Test func message_truncation_keeps_question_and_opt_and_sets_tc() throws {
    var message = DNSMessage(
        header: DNSHeader(id: 1, isResponse: true),
        questions: [DNSQuestion(name: try DNSName("big.example"), type: .txt)],
        edns: EDNS(udpPayloadSize: 1232))
    let owner = try DNSName("big.example")
    message.answers = (0..<10).map { index in
        DNSRecord(name: owner, type: .txt, ttl: 60, rdata: .txt([Array(repeating: UInt8(index), count: 200)]))
    }
    let full = try message.serialize()
    #expect(full.count > 1232)
    let small = try message.serialize(truncatingTo: 1232)
    #expect(small.count <= 1232)
    let reply = try DNSMessage(parsing: small)
    #expect(reply.header.truncated)
    #expect(reply.questions == message.questions)
    #expect(reply.answers.isEmpty)
    #expect(reply.edns == message.edns)
    // A message that fits is left alone, TC clear.
    #expect(try message.serialize(truncatingTo: 65535) == full)
}

@Test func response_builder_reuse_does_not_leak_state() throws {
    var parsed = DNSQuery()
    var builder = DNSResponseBuilder()
    try parsed.parse(query("first.example", .a))
    builder.start(replyingTo: parsed, rcode: .noError)
    try builder.appendAnswerA(ttl: 1, .any)
    try builder.finish(edns: nil)
    try parsed.parse(query("second.example", .aaaa, id: 7))
    builder.start(replyingTo: parsed, rcode: .nameError)
    try builder.finish(edns: nil)
    let reply = try DNSMessage(parsing: builder.bytes)
    #expect(reply.header.id == 7)
    #expect(reply.rcode == .nameError)
    #expect(reply.answers.isEmpty)
    #expect(reply.questions == [DNSQuestion(name: try DNSName("second.example"), type: .aaaa)])
}

@Test func soa_owned_by_the_question_is_a_pointer_to_it() throws {
    var parsed = DNSQuery()
    try parsed.parse(query("Reels.Instagram.com", .https, edns: EDNS()))
    let soa = SOAData(
        primaryNameServer: try DNSName("scrolloff.invalid"), responsibleMailbox: try DNSName("blocked.scrolloff.invalid"),
        serial: 1, refresh: 60, retry: 60, expire: 60, minimum: 10)
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: parsed, rcode: .nameError)
    try builder.appendAuthoritySOA(ttl: 10, soa)
    try builder.finish(edns: EDNS(), extendedErrors: [ExtendedDNSError(infoCode: .blocked)])
    let reply = try DNSMessage(parsing: builder.bytes)
    #expect(reply.rcode == .nameError)
    #expect(reply.authorities == [DNSRecord(name: try DNSName("reels.instagram.com"), type: .soa, ttl: 10, rdata: .soa(soa))])
    let authorityStart = 12 + parsed.name.count + 4
    #expect(Array(builder.bytes[authorityStart..<authorityStart + 2]) == [0xC0, 0x0C])
}
