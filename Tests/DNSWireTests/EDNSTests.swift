import DNSWire
import Testing

@Test func opt_record_fields_decode() throws {
    let packet = try hex("""
        12 34 01 00  00 01 00 00 00 00 00 01
        00 00 01 00 01                           # root A IN
        00                                       # OPT owner: root
        00 29                                    # TYPE 41
        10 00                                    # UDP payload 4096
        00 00 80 00                              # ext-rcode 0, version 0, DO=1
        00 0C                                    # RDLENGTH 12
        00 0A 00 08 01 02 03 04 05 06 07 08      # COOKIE option
        """)
    let message = try DNSMessage(parsing: packet)
    let edns = try #require(message.edns)
    #expect(edns.udpPayloadSize == 4096)
    #expect(edns.version == 0)
    #expect(edns.dnssecOK)
    #expect(edns.options == [EDNSOption(code: .cookie, data: [1, 2, 3, 4, 5, 6, 7, 8])])
    #expect(message.additionals.isEmpty)
}

@Test func extended_rcode_combines_header_and_opt_bits() throws {
    let packet = try hex("""
        12 34 81 80  00 00 00 00 00 00 00 01     # header RCODE 0
        00 00 29 04 D0 01 00 00 00 00 00         # OPT ext-rcode 1 → RCODE 16 (BADVERS)
        """)
    let message = try DNSMessage(parsing: packet)
    #expect(message.rcode == .badVersion)
    try roundTrip(message)
}

@Test func extended_rcode_without_opt_is_refused_by_the_writer() {
    let message = DNSMessage(header: DNSHeader(isResponse: true), rcode: .badVersion)
    #expect(throws: DNSWireError.extendedRcodeWithoutEDNS(rcode: .badVersion)) { try message.serialize() }
}

@Test func ede_blocked_encodes_as_rfc8914_option() throws {
    let error = ExtendedDNSError(infoCode: .blocked, extraText: "until 18:00")
    #expect(error.option.code == EDNSOptionCode(15))
    #expect(error.optionData == [0x00, 0x0F] + Array("until 18:00".utf8))
    #expect(ExtendedDNSError(optionData: error.optionData) == error)
}

@Test func ede_decodes_from_a_message_and_tolerates_nul_and_bad_utf8() throws {
    let packet = try hex("""
        12 34 81 80  00 00 00 00 00 00 00 01
        00 00 29 04 D0 00 00 00 00
        00 18                                    # RDLENGTH 24
        00 0F 00 06 00 11 6F 6B 21 00            # EDE 17 (Filtered) "ok!" + NUL
        00 0F 00 02 00 0F                        # EDE 15 (Blocked), no text
        00 0F 00 04 00 00 FF FE                  # EDE 0 with invalid UTF-8
        """)
    let message = try DNSMessage(parsing: packet)
    let errors = try #require(message.edns).extendedErrors
    #expect(errors.map(\.infoCode) == [.filtered, .blocked, .other])
    #expect(errors[0].extraText == "ok!")
    #expect(errors[1].extraText == "")
    #expect(errors[2].extraText.unicodeScalars.count == 2)
}

@Test func ede_option_shorter_than_info_code_is_skipped_not_fatal() throws {
    #expect(ExtendedDNSError(optionData: [0x00]) == nil)
    let edns = EDNS(options: [EDNSOption(code: .extendedDNSError, data: [1])])
    #expect(edns.extendedErrors.isEmpty)
}

@Test func edns_with_ede_round_trips_through_a_message() throws {
    let message = DNSMessage(
        header: DNSHeader(id: 9, isResponse: true, recursionDesired: true),
        questions: [DNSQuestion(name: try DNSName("tiktok.com"), type: .https)],
        edns: EDNS(
            udpPayloadSize: 1232, version: 0, dnssecOK: true, zeroFlags: 0x0001,
            options: [ExtendedDNSError(infoCode: .blocked, extraText: "Scroll Off").option]))
    let bytes = try roundTrip(message)
    #expect(try DNSMessage(parsing: bytes).edns?.extendedErrors == [ExtendedDNSError(infoCode: .blocked, extraText: "Scroll Off")])
}

@Test func opt_is_written_last_in_the_additional_section() throws {
    let message = DNSMessage(
        header: DNSHeader(isResponse: true),
        additionals: [.a(try DNSName("ns.example"), ttl: 5, IPv4Address(192, 0, 2, 53))],
        edns: EDNS())
    let bytes = try roundTrip(message)
    #expect(Array(bytes[10..<12]) == [0, 2])
    #expect(Array(bytes.suffix(11)) == [0x00, 0x00, 0x29, 0x04, 0xD0, 0, 0, 0, 0, 0, 0])
}
