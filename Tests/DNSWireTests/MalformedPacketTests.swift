import DNSWire
import Testing

// Tricky packets from RFC 9267 and SPEC §9: each must give its typed error at the right offset.

private func expectError(
    _ bytes: [UInt8], _ expected: DNSWireError, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(throws: expected, sourceLocation: sourceLocation) { try DNSMessage(parsing: bytes) }
}

@Test(arguments: 0...11)
func packets_shorter_than_the_header_are_truncatedHeader(length: Int) {
    let bytes = Array(header().prefix(length))
    expectError(bytes, .truncatedHeader(length: length))
    var query = DNSQuery()
    #expect(throws: DNSWireError.truncatedHeader(length: length)) { try query.parse(bytes) }
    #expect(DNSQueryGate.decide(bytes) == .drop)
}

@Test func self_pointer_C00C_is_rejected_as_not_backward() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 00   # header, QDCOUNT 1
        C0 0C                                   # question name: pointer to itself
        00 01 00 01                             # A IN
        """)
    expectError(packet, .pointerNotBackward(offset: 12, target: 12))
}

@Test func forward_pointer_is_rejected() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 00
        C0 0E                                   # pointer forward to offset 14
        00 00 01 00 01                          # root name, then A IN: a loop-free target, still forward
        """)
    expectError(packet, .pointerNotBackward(offset: 12, target: 14))
}

@Test func pointer_after_a_label_pointing_forward_is_rejected() throws {
    let packet = try hex("""
        12 34 81 80  00 01 00 00 00 00 00 00
        01 61 C0 11                             # @12 question "a", then @14 a pointer to 17
        00 01 00 01
        """)
    expectError(packet, .pointerNotBackward(offset: 14, target: 17))
}

/// A question with the root name, then `records` answers whose owners are each one pointer to
/// the previous owner, so the last owner needs `records` hops to reach the root at offset 12.
private func pointerChain(records: Int) -> [UInt8] {
    var bytes = header(flags: 0x8180, an: UInt16(records)) + [0x00, 0x00, 0x01, 0x00, 0x01]
    var previous = 12
    for _ in 0..<records {
        let here = bytes.count
        bytes += [0xC0 | UInt8(previous >> 8), UInt8(previous & 0xFF)]
        bytes += [0xFF, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0]  // TYPE65280 IN, TTL 0, RDLENGTH 0
        previous = here
    }
    return bytes
}

@Test func chain_of_126_pointers_is_accepted() throws {
    let message = try DNSMessage(parsing: pointerChain(records: 126))
    #expect(message.answers.count == 126)
    #expect(message.answers.allSatisfy { $0.name == .root })
}

@Test func chain_of_127_pointers_is_rejected() {
    let lastOwner = 17 + 12 * 126
    expectError(pointerChain(records: 127), .tooManyPointers(offset: lastOwner))
}

@Test func name_of_255_octets_is_accepted() throws {
    let name = label(63) + label(63) + label(63) + label(61) + [0]
    #expect(name.count == 255)
    let message = try DNSMessage(parsing: header() + name + [0, 1, 0, 1])
    #expect(message.questions.first?.name.wireBytes == name)
}

@Test func name_of_256_octets_is_rejected() {
    let name = label(63) + label(63) + label(63) + label(62) + [0]
    #expect(name.count == 256)
    expectError(header() + name + [0, 1, 0, 1], .nameTooLong(offset: 12))
}

@Test func name_over_255_octets_through_a_pointer_is_rejected() {
    // 200 octets in the question, then an answer owner of a 60-octet label + pointer: 61 + 200.
    let first = label(63) + label(63) + label(63) + label(6) + [0]
    let question = first + [0, 1, 0, 1]
    let owner = label(60) + [0xC0, 12]
    let packet = header(flags: 0x8180, an: 1) + question + owner + [0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4]
    #expect(first.count == 200)
    expectError(packet, .nameTooLong(offset: 12 + question.count))
}

@Test func label_length_64_is_label_type_0x40_and_rejected() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 00
        40                                       # "length 64": the 0b01 extended label type
        """) + Array(repeating: UInt8(ascii: "a"), count: 64) + [0, 0, 1, 0, 1]
    expectError(packet, .unsupportedLabelType(offset: 12, byte: 0x40))
}

@Test(arguments: [UInt8(0x40), 0x41, 0x7F, 0x80, 0x81, 0xBF])
func reserved_label_types_0x40_and_0x80_are_rejected(first: UInt8) {
    let packet = header() + [0x01, 0x61, first, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]
    expectError(packet, .unsupportedLabelType(offset: 14, byte: first))
}

@Test func label_running_past_the_end_is_unexpectedEnd() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 00
        08 61 62 63 64                           # label of 8, only 4 octets follow
        """)
    expectError(packet, .unexpectedEnd(offset: 13, needed: 8))
}

@Test func pointer_cut_in_half_is_unexpectedEnd() throws {
    expectError(try hex("12 34 01 00  00 01 00 00 00 00 00 00  C0"), .countsExceedData(offset: 12, minimumNeeded: 5, available: 1))
    // With the count check satisfied, the half pointer itself is found.
    let packet = try hex("12 34 01 00  00 01 00 00 00 00 00 00  01 61 01 62 C0")
    expectError(packet, .unexpectedEnd(offset: 16, needed: 2))
}

@Test func rdlength_past_the_end_is_rejected() throws {
    let packet = try hex("""
        12 34 81 80  00 01 00 01 00 00 00 00
        00 00 01 00 01                           # question: root A IN
        00 00 01 00 01 00 00 00 3C               # answer: root A IN TTL 60
        00 0A                                    # @26 RDLENGTH 10
        C0 00 02 01                              # only 4 octets left
        """)
    expectError(packet, .rdataPastEnd(offset: 26, rdlength: 10, available: 4))
}

@Test func ancount_65535_with_no_data_fails_the_count_check_before_reading() throws {
    let packet = try hex("""
        12 34 81 80  00 01 FF FF 00 00 00 00     # ANCOUNT 65535
        00 00 01 00 01                           # the question, nothing else
        """)
    expectError(packet, .countsExceedData(offset: 12, minimumNeeded: 5 + 65535 * 11, available: 5))
}

@Test func two_opt_records_are_rejected() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 02
        00 00 01 00 01
        00 00 29 04 D0 00 00 00 00 00 00         # @17 OPT, 1232, no options
        00 00 29 04 D0 00 00 00 00 00 00         # @28 second OPT
        """)
    expectError(packet, .multipleOPT(offset: 28))
    var query = DNSQuery()
    try query.parse(packet)
    #expect(query.optCount == 2)
}

@Test func opt_in_the_answer_section_is_rejected() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 01 00 00 00 00
        00 00 01 00 01
        00 00 29 04 D0 00 00 00 00 00 00         # @17 OPT in the answer section
        """)
    expectError(packet, .optOutsideAdditional(offset: 17))
    var query = DNSQuery()
    #expect(throws: DNSWireError.optOutsideAdditional(offset: 17)) { try query.parse(packet) }
}

@Test func opt_with_an_owner_other_than_root_is_rejected() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 01
        00 00 01 00 01
        01 61 00 00 29 04 D0 00 00 00 00 00 00   # @17 OPT owned by "a"
        """)
    expectError(packet, .optOwnerNotRoot(offset: 17))
}

@Test func opt_option_running_past_rdata_is_rejected() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 01
        00 00 01 00 01
        00 00 29 04 D0 00 00 00 00 00 06         # OPT with RDLENGTH 6
        00 0F 00 05 00 0F                        # @28 EDE claiming 5 octets, 2 present
        """)
    expectError(packet, .malformedOption(offset: 28))
}

/// Answers of class IN whose RDATA does not fit their type; `rdata` starts at offset 28.
@Test(arguments: [
    ("A with 5 octets", DNSType.a, "05 01 02 03 04 05"),
    ("AAAA with 4 octets", .aaaa, "04 01 02 03 04"),
    ("CNAME name longer than RDLENGTH", .cname, "02 03 61 62 63 00"),
    ("CNAME with octets after its name", .cname, "03 00 00 00"),
    ("MX with only a preference", .mx, "02 00 0A"),
    ("SOA missing its counters", .soa, "06 00 00 00 00 00 01"),
    ("TXT string past RDLENGTH", .txt, "03 05 61 62"),
])
func rdata_not_matching_its_type_is_malformedRDATA(name: String, type: DNSType, rdata: String) throws {
    let typeBytes = [UInt8(type.rawValue >> 8), UInt8(type.rawValue & 0xFF)]
    let packet = try header(flags: 0x8180, an: 1) + hex("00 00 01 00 01") + [0] + typeBytes
        + hex("00 01 00 00 00 3C 00") + hex(rdata)
    #expect(throws: DNSWireError.malformedRDATA(offset: 28, type: type)) { try DNSMessage(parsing: packet) }
}

@Test func rdata_name_with_bad_pointer_uses_the_same_limits() throws {
    let packet = try hex("""
        12 34 81 80  00 01 00 01 00 00 00 00
        00 00 05 00 01                           # question: root CNAME IN
        00 00 05 00 01 00 00 00 3C 00 02         # answer CNAME, RDLENGTH 2
        C0 1C                                    # @28 pointer to itself
        """)
    expectError(packet, .pointerNotBackward(offset: 28, target: 28))
}

@Test func trailing_octets_after_the_last_record_are_ignored() throws {
    let packet = header() + [0, 0, 1, 0, 1] + [0xDE, 0xAD]
    let message = try DNSMessage(parsing: packet)
    #expect(message.questions == [DNSQuestion(name: .root, type: .a)])
}

@Test func every_error_message_names_the_offset() {
    let errors: [DNSWireError] = [
        .unexpectedEnd(offset: 41, needed: 2), .nameTooLong(offset: 41),
        .pointerNotBackward(offset: 41, target: 50), .tooManyPointers(offset: 41),
        .rdataPastEnd(offset: 41, rdlength: 9, available: 2), .malformedRDATA(offset: 41, type: .mx),
        .multipleOPT(offset: 41),
    ]
    for error in errors { #expect(error.description.contains("41")) }
}

@Test func opt_owner_written_as_a_pointer_to_root_is_accepted_by_both_parsers() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 01
        00 00 01 00 01                           # @12 question: root A IN
        C0 0C 00 29 04 D0 00 00 00 00 00 00      # OPT whose owner points at the root label at 12
        """)
    #expect(try DNSMessage(parsing: packet).edns == EDNS(udpPayloadSize: 1232))
    var query = DNSQuery()
    try query.parse(packet)
    #expect(query.optCount == 1)
}
