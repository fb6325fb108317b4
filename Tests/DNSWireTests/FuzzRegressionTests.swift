import DNSWire
import Testing

// Inputs found by `make fuzz`, kept as named cases (ARCHITECTURE.md principle 10). The artifact
// name is libFuzzer's SHA-1 of the input.

/// crash-c1af5cc31dc294fcf344a17f186edafdf0fbd41a: an answer owner `C0 00` read the ID's first
/// octet (0x00) as the root, so rewriting the ID for a cached reply changed the name. Pointers into
/// the header are now refused by every reader.
@Test func fuzz_c1af5cc3_pointer_into_the_header_is_rejected() throws {
    let packet = try hex("""
        00 01 81 00 00 01 00 04 00 00 00 01                  # ID 1, 1 question, 4 answers, 1 additional
        03 77 77 77 07 65 78 61 6D 70 6C 65 03 63 6F 6D 00   # @12 www.example.com
        00 01 00 01                                          # A IN
        C0 0C 00 05 00 01 00 00 01 2C 00 12                  # @33 CNAME, TTL 300, RDLENGTH 18
        04 65 64 67 65 07 65 78 61 6D 70 6C 65 03 6E 45 74 00  # edge.example.nEt
        C0 00                                                # @63 owner: pointer to offset 0
        FF FF FF FF FF FF FF 01 00 09 02 65 32 24 63 64 6E C0 32
        C0 4B 0C 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        20 00 00 00 00 00
        """)
    #expect(throws: DNSWireError.pointerIntoHeader(offset: 63, target: 0)) { try DNSMessage(parsing: packet) }
    #expect(throws: DNSWireError.pointerIntoHeader(offset: 63, target: 0)) { try DNSMessageLayout(parsing: packet) }
}

@Test func pointer_reading_a_ttl_field_makes_the_reply_unpatchable() throws {
    let packet = try hex("""
        12 34 81 80 00 01 00 02 00 00 00 00
        00 00 01 00 01                                       # @12 question: root A IN
        00 FF 00 00 01 01 61 00 00 00 00                     # @17 TYPE65280, TTL octets @22 = "a" + root
        C0 16 FF 00 00 01 00 00 00 3C 00 00                  # @28 owner: pointer to 22, inside that TTL
        """)
    let message = try DNSMessage(parsing: packet)
    #expect(message.answers.map(\.name) == [.root, try DNSName("a")])
    #expect(throws: DNSWireError.pointerReadsTTL(ttlOffset: 22)) { try DNSMessageLayout(parsing: packet) }
    // Re-serialized, the same message is patchable: our writer points only at names.
    #expect(try DNSMessageLayout(parsing: message.serialize()).ttlFields.count == 2)
}

@Test func pointer_reading_a_ttl_from_cname_rdata_is_caught_too() throws {
    let packet = try hex("""
        12 34 81 80 00 01 00 02 00 00 00 00
        00 00 01 00 01                                       # @12 question: root A IN
        00 FF 00 00 01 01 61 00 00 00 00                     # @17 TTL octets @22 = "a" + root
        00 00 05 00 01 00 00 00 3C 00 02 C0 16               # @28 CNAME whose target points to 22
        """)
    #expect(throws: DNSWireError.pointerReadsTTL(ttlOffset: 22)) { try DNSMessageLayout(parsing: packet) }
}

/// crash-41efa25846ffd38ce6ad9497edf889989ba282e9: an answer owner pointed back into the question's
/// TYPE field, whose low octet became a label running forward over the answer's own TTL (the
/// fixture is that input reduced by hand). Runs are now checked against every TTL field, not only
/// the earlier ones.
@Test func fuzz_41efa258_pointer_run_over_later_ttls_makes_the_reply_unpatchable() throws {
    let packet = try hex("""
        00 04 81 00 00 01 00 01 00 00 00 00
        01 61 00                                   # @12 question "a"
        00 10 00 01                                # @15 TXT IN; the 10 at 16 reads as a 16-octet label
        C0 10                                      # @19 owner: pointer to 16
        00 0F 00 01 00 00 01 2C 00 09              # MX IN, TTL @25 = 300, RDLENGTH 9
        00 0A 04 6D 61 69 6C C0 0C                 # @31 preference 10; @33 mail + pointer to 12
        """)
    let message = try DNSMessage(parsing: packet)
    #expect(message.answers.count == 1)
    #expect(throws: DNSWireError.pointerReadsTTL(ttlOffset: 25)) { try DNSMessageLayout(parsing: packet) }
}

/// crash-7b884562a1f43c1a2b6bf4a884ba9011c2929e6b: an MX exchange pointed back to a label that runs
/// on past the end of the MX RDATA. The parser reads pointed-to labels from the whole message; the
/// layout read them from the RDATA alone and refused a message the parser accepted.
@Test func fuzz_7b884562_rdata_name_read_through_a_pointer_may_run_past_the_rdata() throws {
    let packet = try hex("""
        00 04 81 00 00 01 00 01 00 00 00 00
        00 00 0F 00 01                                      # @12 question: root MX IN
        00 00 0F 00 01 00 00 00 3C 00 04                    # @17 MX IN TTL 60, RDLENGTH 4
        00 0A C0 1D                                         # @28 preference 10, whose 0A is also a
                                                            #     10-octet label at 29; pointer to it
        61 61 61 61 61 61 61 61 00                          # @32 trailing: rest of that label, root
        """)
    let message = try DNSMessage(parsing: packet)
    guard case .mx(let preference, let exchange)? = message.answers.first?.rdata else {
        Issue.record("no MX parsed")
        return
    }
    #expect(preference == 10)
    #expect(exchange.wireBytes == [10, 0xC0, 0x1D] + Array(repeating: 0x61, count: 8) + [0])
    #expect(try DNSMessageLayout(parsing: packet).ttlFields.map(\.offset) == [22])
}

/// crash-dfdda023e9794c5043a07321fa018aed2ba224e0: a question name whose pointer led to labels
/// running forward over the TTL of a later record. Question names are now checked as well.
@Test func fuzz_dfdda023_question_name_read_through_a_pointer_over_a_ttl_is_unpatchable() throws {
    let packet = try hex("""
        12 34 81 80 00 02 00 01 00 00 00 00
        01 61 00 00 01 00 10                             # @12 question 1: a, A, CLASS16; the 10 at
                                                         #     18 doubles as a 16-octet label
        C0 12 00 01 00 01                                # @19 question 2: pointer to 18
        00 FF 00 00 01 00 00 00 3C 00 00                 # @25 answer TYPE65280, TTL @30, RDLENGTH 0
        """)
    let message = try DNSMessage(parsing: packet)
    #expect(message.questions.count == 2)
    #expect(message.questions[1].name.wireBytes.count == 18)
    #expect(throws: DNSWireError.pointerReadsTTL(ttlOffset: 30)) { try DNSMessageLayout(parsing: packet) }
}
