import DNSWire
import Testing

@Test func names_compare_without_case_and_hash_alike() throws {
    let upper = try DNSName("WWW.Example.COM")
    let lower = try DNSName("www.example.com")
    #expect(upper == lower)
    #expect(Set([upper, lower]).count == 1)
    #expect(upper != (try DNSName("www.example.co")))
}

@Test func trailing_dot_is_ignored() throws {
    #expect(try DNSName("example.com.") == DNSName("example.com"))
    #expect(try DNSName("example.com.").description == "example.com")
}

@Test func root_is_written_as_a_dot() throws {
    #expect(try DNSName(".") == .root)
    #expect(try DNSName("") == .root)
    #expect(DNSName.root.description == ".")
    #expect(DNSName.root.wireBytes == [0])
}

@Test func presentation_keeps_case_and_lowercased_presentation_folds_it() throws {
    let name = try DNSName("TikTok.COM")
    #expect(name.description == "TikTok.COM")
    #expect(name.lowercasedPresentation == "tiktok.com")
    #expect(name.lowercased.wireBytes == (try wire("tiktok.com")))
}

@Test(arguments: [
    ("a\\.b.example", [1 + 3, 1 + 7], "label with an escaped dot"),
    ("\\000\\255x.example", [1 + 3, 1 + 7], "NUL and 0xFF octets"),
    ("sp\\032ace.example", [1 + 6, 1 + 7], "escaped space"),
    ("back\\\\slash.example", [1 + 10, 1 + 7], "escaped backslash"),
])
func escaped_names_parse_and_print_back_to_the_same_name(text: String, labelSizes: [Int], why: String) throws {
    let name = try DNSName(text)
    #expect(name.labels.map { $0.count + 1 } == labelSizes, "\(why)")
    let printed = name.description
    #expect(try DNSName(printed) == name, "\(why): \(printed)")
}

@Test func non_printable_octets_print_as_DDD() throws {
    let name = try DNSName(wireBytes: [3, 0x00, 0x41, 0xFF, 1, UInt8(ascii: "."), 0])
    #expect(name.description == "\\000A\\255.\\.")
    #expect(name.lowercasedPresentation == "\\000a\\255.\\.")
}

@Test(arguments: [
    ("a..b", "empty label"),
    (".a", "empty label"),
    (String(repeating: "a", count: 64) + ".com", "label over 63"),
    ("a\\25", "short \\DDD"),
    ("a\\256", "\\DDD over 255"),
    ("a\\", "lone backslash"),
    (Array(repeating: String(repeating: "a", count: 63), count: 4).joined(separator: "."), "256 octets"),
])
func invalid_presentation_names_are_rejected(text: String, why: String) {
    #expect(throws: DNSWireError.self, "\(why)") { try DNSName(text) }
}

@Test func name_of_63_octet_labels_up_to_255_octets_is_accepted() throws {
    let text = Array(repeating: String(repeating: "a", count: 63), count: 3).joined(separator: ".")
        + "." + String(repeating: "b", count: 61)
    #expect(try DNSName(text).wireBytes.count == 255)
}

@Test func wire_bytes_are_validated() {
    #expect(throws: DNSWireError.self) { try DNSName(wireBytes: [1, 0x61]) }
    #expect(throws: DNSWireError.trailingOctets(offset: 3)) { try DNSName(wireBytes: [1, 0x61, 0, 0]) }
    #expect(throws: DNSWireError.self) { try DNSName(wireBytes: [0x40] + Array(repeating: 0x61, count: 64) + [0]) }
}

@Test(arguments: [
    ("tiktok.com", "tiktok.com", true),
    ("www.TikTok.com", "tiktok.com", true),
    ("a.b.tiktok.com", "tiktok.com", true),
    ("nottiktok.com", "tiktok.com", false),
    ("tiktok.com.evil", "tiktok.com", false),
    ("com", "tiktok.com", false),
    ("anything.example", ".", true),
])
func subdomain_check_respects_label_boundaries(name: String, ancestor: String, expected: Bool) throws {
    #expect(try DNSName(name).isEqualOrSubdomain(of: DNSName(ancestor)) == expected)
}

@Test func label_count_and_labels() throws {
    let name = try DNSName("a.bc.def")
    #expect(name.labelCount == 3)
    #expect(name.labels.map { String(decoding: $0, as: UTF8.self) } == ["a", "bc", "def"])
    #expect(DNSName.root.labelCount == 0)
}

@Test func addresses_parse_and_print() throws {
    #expect(IPv4Address("192.0.2.1")?.description == "192.0.2.1")
    #expect(IPv4Address("256.0.0.1") == nil)
    #expect(IPv4Address("1.2.3") == nil)
    #expect(IPv4Address("+1.2.3.4") == nil)
    #expect(IPv6Address("+1::") == nil)
    #expect(IPv6Address("2001:db8::1")?.description == "2001:db8::1")
    #expect(IPv6Address("::")?.description == "::")
    #expect(IPv6Address("1:0:0:2:0:0:0:3")?.description == "1:0:0:2::3")
    #expect(IPv6Address("1::2::3") == nil)
    let address = try #require(IPv6Address("2001:db8::ff"))
    #expect(IPv6Address(bytes: address.bytes) == address)
}
