import Testing
@testable import DomainLists

/// From a review (SPEC §9): the one-pass parse of `name` / `0.0.0.0 name` lines against the full path, on
/// the awkward lines a blocker meets (a name the fast path drops, mis-lowercases or mis-splits
/// would answer normally, failing open). Each line is parsed as written and with a trailing
/// comment, which sends it down the full path and changes nothing else about it.
@Suite("Simple-line parse: awkward hosts and plain lines parse as the full path does")
struct SimpleLineEdgeCaseTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let lines: [[UInt8]] = {
        let label63 = String(repeating: "q", count: 63), label64 = String(repeating: "W", count: 64)
        // Three labels of 63, one of 61 and three dots: exactly 253 bytes, the longest name (RFC 1035 §2.3.4).
        let name253 = [label63, label63, label63, String(repeating: "r", count: 61)].joined(separator: ".")
        let name254 = name253 + "s"
        var texts = [
            "Ads.Example.NET", "XN--BCHER-KVA.example", "a.Xn--zz", "xn--.com", "ab--cd.com", "-a.com", "a-.com",
            "_dmarc.a.com", "a.b_", "a.1", "a.1a", "1.2.3.4", "1.2.3.4a", "0.0.0.0", "127.0.0.1", "localhost",
            "localhost.localdomain", "LOCALHOST.LocalDomain", "a.com.", "a.com..", "a..b", ".a.com", "single",
            label63 + ".com", label64 + ".com", name253, name253.uppercased(), name254, name253 + ".",
            "0.0.0.0 a.com b.com", "0.0.0.0 A.com localhost", "0.0.0.0\ta.com", "0.0.0.0   a.com",
            "0.0.0.0\u{0B}a.com", "0.0.0.0\u{0C}a.com", "127.0.0.1 localhost", "127.0.0.1 a.com", "::1 a.com",
            "0.0.0.0 0.0.0.0", "0.0.0.0 1.2.3.4", "0.0.0.00 a.com", "0.0.0.0.a.com", "127.0.0.1a.com",
            "a.com\u{0}", "a\u{0}.com", "0.0.0.0 a\u{0}.com", "münchen.de", "MÜNCHEN.de", "a\u{3002}b",
            "0.0.0.0 " + name253, "0.0.0.0 " + label64 + ".com", "*.a.com", "0.0.0.0 *.a.com",
        ].map(bytes)
        texts += [[0xFF, 0x2E, 0x63, 0x6F, 0x6D], [0x61, 0x2E, 0xC3], bytes("0.0.0.0 ") + [0xC3, 0xA9, 0x2E, 0x63, 0x6F]]
        return texts
    }()

    static func parse(_ text: [UInt8]) throws -> ParsedList {
        try ListParser.parse(text, options: ListParseOptions(budget: BadLineBudget(perThousandLines: 1000), allowEmpty: true))
    }

    static func expectSame(_ fast: ParsedList, _ full: ParsedList, _ comment: Comment) {
        SimpleLinePathTests.expectSame(fast, full, comment)
    }

    @Test func each_awkward_line_alone_with_lf_crlf_or_no_newline_parses_as_the_full_path_does() throws {
        let comment = Self.bytes(" # the full path")
        for line in Self.lines {
            for (ending, label) in [([UInt8(ascii: "\n")], "LF"), ([0x0D, 0x0A], "CRLF"), ([], "none")] as [([UInt8], String)] {
                let fast = try Self.parse(line + ending)
                let full = try Self.parse(line + comment + ending)
                Self.expectSame(fast, full, "\(String(decoding: line, as: UTF8.self).debugDescription) \(label)")
            }
        }
        // The cases people rely on, spelled out.
        let sample = try Self.parse(Self.bytes("\u{FEFF}First.Example\n0.0.0.0 a.com b.com\n0.0.0.0 XN--BCHER-KVA.example\n"))
        #expect(sample.rules.map(\.name.text) == ["first.example", "a.com", "b.com", "xn--bcher-kva.example"])
        #expect(sample.formats.plain == 1 && sample.formats.hosts == 2)
        // A lone CR is white space inside a line (as on main): the text after it is reported, not a name.
        let loneCR = try Self.parse(Self.bytes("a.c\rb.d\n"))
        #expect(loneCR.rules.isEmpty)
        #expect(loneCR.badLines == [BadLine(lineNumber: 1, reason: .unexpectedText("b.d"))])
    }

    @Test func all_awkward_lines_in_one_list_fed_in_odd_chunks_parse_as_the_full_path_does() throws {
        let comment = Self.bytes(" # the full path")
        var fastText: [UInt8] = [0xEF, 0xBB, 0xBF], fullText: [UInt8] = [0xEF, 0xBB, 0xBF]
        for line in Self.lines + Self.lines.map({ $0.map { DomainNormalizer.lowercased($0) } }) {
            fastText += line + [0x0A]
            fullText += line + comment + [0x0A]
        }
        let options = ListParseOptions(budget: BadLineBudget(perThousandLines: 1000), allowEmpty: true)
        for chunk in [1, 7, 64] {
            var parser = ListParser(options: options)
            var offset = 0
            while offset < fastText.count {
                parser.consume(Array(fastText[offset..<min(offset + chunk, fastText.count)]))
                offset += chunk
            }
            Self.expectSame(try parser.finish(), try Self.parse(fullText), "chunks of \(chunk)")
        }
    }
}
