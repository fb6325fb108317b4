import Testing
@testable import DomainLists

struct DomainNameTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var input: String
        var expected: String
        var testDescription: String { "\(input.debugDescription) → \(expected)" }
    }

    @Test("normalizes to lowercase ASCII with A-labels, one trailing dot ignored", arguments: [
        Case(input: "example.com", expected: "example.com"),
        Case(input: "WWW.Example.COM", expected: "www.example.com"),
        Case(input: "example.com.", expected: "example.com"),
        Case(input: "_dmarc.example.com", expected: "_dmarc.example.com"),
        Case(input: "ads-1.tracker_2.example", expected: "ads-1.tracker_2.example"),
        Case(input: "bücher.example", expected: "xn--bcher-kva.example"),
        Case(input: "BÜCHER.example", expected: "xn--bcher-kva.example"),
        Case(input: "www.xn--bcher-kva.example", expected: "www.xn--bcher-kva.example"),
        Case(input: "XN--BCHER-KVA.example", expected: "xn--bcher-kva.example"),
        Case(input: "παράδειγμα.δοκιμή", expected: "xn--hxajbheg2az3al.xn--jxalpdlp"),
        Case(input: "例え。テスト", expected: "xn--r8jz45g.xn--zckzah"),
        Case(input: "mañana．example", expected: "xn--maana-pta.example"),
        Case(input: "123.example", expected: "123.example"),
        Case(input: String(repeating: "a", count: 63) + ".example", expected: String(repeating: "a", count: 63) + ".example"),
    ])
    func normalizes(_ testCase: Case) throws {
        #expect(try DomainName(testCase.input).text == testCase.expected)
    }

    struct Failure: CustomTestStringConvertible, Sendable {
        var input: String
        var error: DomainNameError
        var testDescription: String { "\(input.debugDescription) fails" }
    }

    @Test("refuses what is not a domain name, saying why", arguments: [
        Failure(input: "", error: .empty),
        Failure(input: ".", error: .empty),
        Failure(input: "example..com", error: .emptyLabel),
        Failure(input: ".example.com", error: .emptyLabel),
        Failure(input: "example.com..", error: .emptyLabel),
        Failure(input: String(repeating: "a", count: 64) + ".example", error: .labelTooLong(length: 64)),
        Failure(input: (0..<64).map { _ in "abc" }.joined(separator: "."), error: .nameTooLong(length: 255)),
        Failure(input: "exa mple.com", error: .invalidCharacter(" ")),
        Failure(input: "exa\tmple.com", error: .invalidCharacter("\t")),
        Failure(input: "bell\u{07}.example", error: .invalidCharacter("\u{07}")),
        Failure(input: "del\u{7F}.example", error: .invalidCharacter("\u{7F}")),
        Failure(input: "*.example.com", error: .invalidCharacter("*")),
        Failure(input: "ads^.example", error: .invalidCharacter("^")),
        Failure(input: "snow☃.example", error: .invalidCharacter("☃")),
        Failure(input: "zero\u{200B}width.example", error: .invalidCharacter("\u{200B}")),
        Failure(input: "192.168.1.1", error: .ipAddress),
        Failure(input: "0.0.0.0", error: .ipAddress),
        Failure(input: "::1", error: .ipAddress),
        Failure(input: "2001:db8::1", error: .ipAddress),
        Failure(input: "example.123", error: .ipAddress),
    ])
    func refuses(_ failure: Failure) {
        #expect(throws: failure.error) { try DomainName(failure.input) }
    }

    @Test func refuses_an_a_label_whose_punycode_does_not_decode() {
        #expect(throws: DomainNameError.invalidPunycode(label: "xn--zz", .truncated)) { try DomainName("xn--zz.example") }
    }

    @Test func refuses_bytes_that_are_not_utf8() {
        var output: [UInt8] = []
        let bytes: [UInt8] = [0x61, 0xC3, 0x28, 0x2E, 0x65, 0x78]
        #expect(throws: DomainNameError.notUTF8) {
            try bytes.withUnsafeBufferPointer { (buffer) throws(DomainNameError) in
                try DomainNormalizer.normalize(buffer, into: &output)
            }
        }
    }

    @Test func a_253_character_name_is_accepted_and_254_is_not() throws {
        // 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253
        let labels = [63, 63, 63, 61].map { String(repeating: "a", count: $0) }
        let longest = labels.joined(separator: ".")
        #expect(longest.count == 253)
        #expect(try DomainName(longest).text == longest)
        #expect(try DomainName(longest + ".").text == longest)
        #expect(throws: DomainNameError.nameTooLong(length: 254)) { try DomainName(longest + "a") }
    }

    @Test func errors_say_what_to_do() {
        #expect(DomainNameError.labelTooLong(length: 70).description.contains("at most 63"))
        #expect(DomainNameError.invalidCharacter("\u{07}").description.contains("U+0007"))
        #expect(DomainNameError.ipAddress.description.contains("IP address"))
    }

    @Test func parent_drops_the_first_label() throws {
        #expect(try DomainName("www.example.com").parent == DomainName("example.com"))
        #expect(try DomainName("com").parent == nil)
        #expect(try DomainName("a.b.c").labels == ["a", "b", "c"])
    }
}
