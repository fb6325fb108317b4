import Testing
@testable import DomainLists

/// One line and what the parser must make of it.
struct LineCase: CustomTestStringConvertible, Sendable {
    enum Outcome: Equatable, Sendable {
        /// These rules, in this order.
        case rules([String])
        case skipped
        case bad
    }
    var line: String
    var outcome: Outcome
    var testDescription: String { line.debugDescription }

    init(_ line: String, _ outcome: Outcome) {
        self.line = line
        self.outcome = outcome
    }
}

/// Describes a rule compactly: `name` for name and subdomains, `=name` exact, `*.name` subdomains
/// only, and a leading `+` for allow.
func describe(_ rule: ListRule) -> String {
    let prefix = rule.action == .allow ? "+" : ""
    switch rule.scope {
    case .nameAndSubdomains: return prefix + rule.name.text
    case .exactName: return prefix + "=" + rule.name.text
    case .subdomainsOnly: return prefix + "*." + rule.name.text
    }
}

/// Parses one line inside a list of filler rules, so the budget never gets in the way.
func outcome(of line: String) -> (LineCase.Outcome, ParsedList?) {
    var parser = ListParser(options: ListParseOptions(budget: BadLineBudget(perThousandLines: 1000), allowEmpty: true))
    parser.consume(line + "\n")
    guard let parsed = try? parser.finish() else { return (.bad, nil) }
    if parsed.badLineCount > 0 { return (.bad, parsed) }
    if parsed.rules.isEmpty { return (.skipped, parsed) }
    return (.rules(parsed.rules.map(describe)), parsed)
}

struct PlainFormatTests {
    @Test("plain lines", arguments: [
        LineCase("example.com", .rules(["example.com"])),
        LineCase("  Example.COM  ", .rules(["example.com"])),
        LineCase("example.com.", .rules(["example.com"])),
        LineCase("\texample.com\t", .rules(["example.com"])),
        LineCase("example.com\r", .rules(["example.com"])),
        LineCase("example.com # inline comment", .rules(["example.com"])),
        LineCase("example.com#comment", .rules(["example.com"])),
        LineCase("bücher.example", .rules(["xn--bcher-kva.example"])),
        LineCase("# a comment", .skipped),
        LineCase("! an adblock comment", .skipped),
        LineCase("", .skipped),
        LineCase("   \t ", .skipped),
        LineCase("localhost", .skipped),
        LineCase("com", .bad),
        LineCase("example..com", .bad),
        LineCase("two words.example", .bad),
        LineCase("example.com extra", .bad),
        LineCase("192.168.1.1", .bad),
        LineCase("exa\u{01}mple.com", .bad),
        LineCase(String(repeating: "a", count: 64) + ".example", .bad),
        LineCase("*", .bad),
        LineCase("https://example.com/path", .bad),
    ])
    func plain(_ testCase: LineCase) {
        #expect(outcome(of: testCase.line).0 == testCase.outcome)
    }
}

struct HostsFormatTests {
    @Test("hosts lines", arguments: [
        LineCase("0.0.0.0 ads.example", .rules(["ads.example"])),
        LineCase("127.0.0.1 ads.example", .rules(["ads.example"])),
        LineCase(":: ads.example", .rules(["ads.example"])),
        LineCase("::1 ads.example", .rules(["ads.example"])),
        LineCase("0.0.0.0\tads.example", .rules(["ads.example"])),
        LineCase("0.0.0.0 \t ads.example \t", .rules(["ads.example"])),
        LineCase("0.0.0.0 a.example b.example c.example", .rules(["a.example", "b.example", "c.example"])),
        LineCase("0.0.0.0 ads.example # inline comment", .rules(["ads.example"])),
        LineCase("0.0.0.0 ads.example #comment with.dots.example", .rules(["ads.example"])),
        LineCase("0.0.0.0 ADS.Example.", .rules(["ads.example"])),
        LineCase("0.0.0.0 ads.example\r", .rules(["ads.example"])),
        LineCase("0.0.0.0 *.ads.example", .rules(["*.ads.example"])),
        LineCase("127.0.0.1 localhost", .skipped),
        LineCase("::1 localhost ip6-localhost ip6-loopback", .skipped),
        LineCase("fe80::1%lo0 localhost", .skipped),
        LineCase("255.255.255.255 broadcasthost", .skipped),
        LineCase("0.0.0.0 0.0.0.0", .skipped),
        LineCase("127.0.0.1 localhost tracker.example", .rules(["tracker.example"])),
        LineCase("0.0.0.0", .bad),
        LineCase("0.0.0.0 # only a comment", .bad),
        LineCase("0.0.0.0 1.2.3.4", .bad),
        LineCase("0.0.0.0 127.0.0.1", .skipped),
        LineCase("0.0.0.0 bad!name.example", .bad),
        LineCase("0.0.0.0 good.example bad!name.example", .bad),
        LineCase("300.0.0.1 ads.example", .bad),
    ])
    func hosts(_ testCase: LineCase) {
        #expect(outcome(of: testCase.line).0 == testCase.outcome)
    }

    @Test func a_bad_name_on_a_hosts_line_keeps_the_good_names_and_reports_the_line_once() throws {
        let (_, parsed) = outcome(of: "0.0.0.0 good.example bad!name.example also-good.example")
        let list = try #require(parsed)
        #expect(list.rules.map(describe) == ["good.example", "also-good.example"])
        #expect(list.badLineCount == 1)
    }

    @Test func local_names_are_counted() throws {
        let parsed = try ListParser.parse("::1 localhost ip6-localhost ip6-loopback\n0.0.0.0 0.0.0.0\n0.0.0.0 x.example\n")
        #expect(parsed.skipped.localNames == 4)
        #expect(parsed.formats.hosts == 1)
    }
}

struct AdblockFormatTests {
    @Test("adblock lines", arguments: [
        LineCase("||ads.example^", .rules(["ads.example"])),
        LineCase("||ads.example", .rules(["ads.example"])),
        LineCase("||ads.example^|", .rules(["ads.example"])),
        LineCase("||ADS.Example.^", .rules(["ads.example"])),
        LineCase("|ads.example^", .rules(["=ads.example"])),
        LineCase("|ads.example^|", .rules(["=ads.example"])),
        LineCase("@@||ok.example^", .rules(["+ok.example"])),
        LineCase("@@|ok.example^", .rules(["+=ok.example"])),
        LineCase("||*.ads.example^", .rules(["*.ads.example"])),
        LineCase("||ads.example^$third-party", .rules(["ads.example"])),
        LineCase("||ads.example^$important,third-party", .rules(["ads.example"])),
        LineCase("||bücher.example^", .rules(["xn--bcher-kva.example"])),
        LineCase("||ads.example^$badfilter", .skipped),
        LineCase("||ads.example^$dnsrewrite=1.2.3.4", .skipped),
        LineCase("||ads.example^$client=192.168.1.2", .skipped),
        LineCase("||ads.example/banner.js", .skipped),
        LineCase("||ads.example^*", .skipped),
        LineCase("|https://ads.example/", .skipped),
        LineCase("/banner[0-9]+/", .skipped),
        LineCase("example.com##.banner", .skipped),
        LineCase("##.banner", .skipped),
        LineCase("###banner-id", .skipped),
        LineCase("example.com#@#.banner", .skipped),
        LineCase("example.com#?#div:has(.ad)", .skipped),
        LineCase("example.com#$#body { color: red }", .skipped),
        LineCase("[Adblock Plus 2.0]", .skipped),
        LineCase("! Title: a list", .skipped),
        LineCase("||^", .bad),
        LineCase("||", .bad),
        LineCase("@@||^", .bad),
        LineCase("|^", .bad),
        LineCase("||com^", .bad),
        LineCase("||exa mple.com^", .bad),
        LineCase("||ads.example^ trailing", .skipped),
    ])
    func adblock(_ testCase: LineCase) {
        #expect(outcome(of: testCase.line).0 == testCase.outcome)
    }

    @Test func ignored_options_cosmetic_and_unsupported_rules_are_counted() throws {
        let text = """
        ||a.example^$third-party
        ||b.example^
        example.com##.ad
        ##.banner
        ###top-ad
        ## a hosts-style comment ##
        #####
        ||c.example/path
        ||d.example^$badfilter
        """
        let parsed = try ListParser.parse(text)
        #expect(parsed.rules.count == 2)
        #expect(parsed.skipped.optionsIgnored == 1)
        #expect(parsed.skipped.cosmetic == 3)
        #expect(parsed.skipped.comments == 2)
        #expect(parsed.skipped.unsupported == 2)
        #expect(parsed.formats.dominant == .adblock)
    }
}

struct WildcardFormatTests {
    @Test("wildcard lines", arguments: [
        LineCase("*.example.com", .rules(["*.example.com"])),
        LineCase("*.Example.COM.", .rules(["*.example.com"])),
        LineCase("*.example.com # comment", .rules(["*.example.com"])),
        LineCase("*.com", .bad),
        LineCase("*example.com", .bad),
        LineCase("*.*.example.com", .bad),
        LineCase("a.*.example.com", .bad),
        LineCase("*.", .bad),
    ])
    func wildcard(_ testCase: LineCase) {
        #expect(outcome(of: testCase.line).0 == testCase.outcome)
    }
}

struct ListParserTests {
    @Test func bad_lines_are_reported_with_their_line_numbers_and_reasons() throws {
        var lines = (1...1000).map { "ok\($0).example" }
        lines[9] = "bad name.example"       // line 10
        lines[499] = "||^"                  // line 500
        let parsed = try ListParser.parse(lines.joined(separator: "\n"))
        #expect(parsed.badLines.map(\.lineNumber) == [10, 500])
        #expect(parsed.badLines[0].reason == .unexpectedText("name.example"))
        #expect(parsed.badLines[1].reason == .emptyAdblockRule)
        #expect(parsed.rules.count == 998)
    }

    /// 1,000 lines with `bad` of them bad.
    static func list(lines: Int, bad: Int) -> String {
        (0..<lines).map { $0 < bad ? "not a name \($0)" : "ok\($0).example" }.joined(separator: "\n")
    }

    @Test func default_budget_accepts_exactly_5_bad_lines_in_1000() throws {
        let parsed = try ListParser.parse(Self.list(lines: 1000, bad: 5))
        #expect(parsed.badLineCount == 5)
        #expect(parsed.rules.count == 995)
    }

    @Test func default_budget_rejects_6_bad_lines_in_1000() {
        #expect {
            try ListParser.parse(Self.list(lines: 1000, bad: 6))
        } throws: { error in
            guard case ListParseError.tooManyBadLines(let count, let lines, let budget, let examples) = error else { return false }
            return count == 6 && lines == 1000 && budget == .default && examples.map(\.lineNumber) == [1, 2, 3, 4, 5, 6]
        }
    }

    @Test func budget_counts_every_physical_line_including_comments() throws {
        // 2 bad lines need 400 lines at 5 per 1,000; comments and blank lines count.
        let rules = (0..<100).map { "ok\($0).example" }
        let padding = Array(repeating: "# comment", count: 298)
        let text = (["bad one", "bad two"] + rules + padding).joined(separator: "\n")
        #expect(try ListParser.parse(text).badLineCount == 2)
        let shorter = (["bad one", "bad two"] + rules + padding.dropLast()).joined(separator: "\n")
        #expect(throws: ListParseError.self) { try ListParser.parse(shorter) }
    }

    @Test func a_configured_budget_replaces_the_default() throws {
        let options = ListParseOptions(budget: BadLineBudget(perThousandLines: 20))
        #expect(try ListParser.parse(Self.list(lines: 1000, bad: 20), options: options).badLineCount == 20)
        #expect(throws: ListParseError.self) { try ListParser.parse(Self.list(lines: 1000, bad: 21), options: options) }
        #expect(throws: ListParseError.self) {
            try ListParser.parse(Self.list(lines: 1000, bad: 1), options: ListParseOptions(budget: .none))
        }
    }

    @Test func the_rejection_message_gives_numbers_and_the_first_bad_lines() {
        let error = ListParseError.tooManyBadLines(
            count: 12, lines: 1000, budget: .default,
            examples: [BadLine(lineNumber: 3, reason: .emptyAdblockRule)]
        )
        #expect(error.description.contains("12 of 1000 lines"))
        #expect(error.description.contains("line 3"))
        #expect(error.description.contains("not used"))
    }

    @Test func a_list_without_any_rule_is_rejected_unless_allowed() throws {
        #expect(throws: ListParseError.noRules(lines: 2)) { try ListParser.parse("# nothing\n\n") }
        #expect(try ListParser.parse("# nothing\n", options: ListParseOptions(allowEmpty: true)).rules.isEmpty)
    }

    @Test func an_html_error_page_served_instead_of_a_list_is_rejected() {
        let page = """
        <!DOCTYPE html>
        <html><head><title>404 Not Found</title></head>
        <body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body>
        </html>
        """
        #expect(throws: ListParseError.self) { try ListParser.parse(page) }
    }

    @Test func crlf_lf_and_a_missing_final_newline_give_the_same_rules() throws {
        let lf = try ListParser.parse("a.example\nb.example\n").rules
        #expect(try ListParser.parse("a.example\r\nb.example\r\n").rules == lf)
        #expect(try ListParser.parse("a.example\nb.example").rules == lf)
    }

    @Test func a_byte_order_mark_is_ignored_on_the_first_line_only() throws {
        let withMark: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("a.example\n".utf8)
        #expect(try ListParser.parse(withMark).rules.map(describe) == ["a.example"])
        let markLater: [UInt8] = Array("a.example\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("b.example\n".utf8)
        let parsed = try ListParser.parse(markLater, options: ListParseOptions(budget: BadLineBudget(perThousandLines: 1000)))
        #expect(parsed.badLines.map(\.lineNumber) == [2])
    }

    @Test func a_line_longer_than_the_limit_is_one_bad_line() throws {
        let long = String(repeating: "a", count: 5000)
        let text = ([long] + (0..<300).map { "ok\($0).example" }).joined(separator: "\n")
        let parsed = try ListParser.parse(text)
        #expect(parsed.badLines == [BadLine(lineNumber: 1, reason: .lineTooLong(bytes: 5000))])
    }

    @Test func mixed_formats_in_one_list_are_detected_per_line() throws {
        let text = """
        # a list that grew by copy and paste
        0.0.0.0 hosts-one.example
        0.0.0.0 hosts-two.example hosts-three.example
        ||adblock.example^
        plain.example
        *.wild.example
        """
        let parsed = try ListParser.parse(text)
        #expect(parsed.rules.map(describe)
            == ["hosts-one.example", "hosts-two.example", "hosts-three.example", "adblock.example", "plain.example", "*.wild.example"])
        #expect(parsed.formats == { var counts = FormatCounts(); counts.hosts = 2; counts.adblock = 1; counts.plain = 1; counts.wildcard = 1; return counts }())
        #expect(parsed.formats.dominant == .hosts)
        #expect(parsed.formats.isMixed)
        #expect(parsed.summary.contains("mostly hosts"))
    }

    @Test func chunks_of_any_size_give_the_same_result_as_one_buffer() throws {
        let text = Array("\u{FEFF}# header\r\n0.0.0.0 a.example b.example\r\n||c.example^$third-party\r\nd.example\n*.e.example\nbad line here\n".utf8)
        let options = ListParseOptions(budget: BadLineBudget(perThousandLines: 1000))
        let whole = try ListParser.parse(text, options: options)
        for chunkSize in [1, 2, 3, 7, 16] {
            var parser = ListParser(options: options)
            var start = 0
            while start < text.count {
                let end = min(start + chunkSize, text.count)
                text[start..<end].withUnsafeBytes { parser.consume($0) }
                start = end
            }
            let chunked = try parser.finish()
            #expect(chunked.rules == whole.rules, "chunk size \(chunkSize)")
            #expect(chunked.badLines == whole.badLines, "chunk size \(chunkSize)")
            #expect(chunked.lineCount == whole.lineCount, "chunk size \(chunkSize)")
        }
        #expect(whole.rules.count == 5)
        #expect(whole.badLines.map(\.lineNumber) == [6])
    }

    @Test func parses_a_file_by_path_and_reports_a_missing_file() throws {
        let parsed = try ListParser.parse(contentsOfFile: Paths.fixtures + "/lists/hosts.txt")
        #expect(parsed.formats.dominant == .hosts)
        #expect {
            try ListParser.parse(contentsOfFile: Paths.fixtures + "/lists/no-such-file.txt")
        } throws: { error in
            guard case ListParseError.unreadable(let path, let errno) = error else { return false }
            return path.hasSuffix("no-such-file.txt") && errno == 2
        }
    }

    @Test func a_million_line_hosts_file_parses_within_budget() throws {
        var text: [UInt8] = []
        text.reserveCapacity(30_000_000)
        for index in 0..<1_000_000 {
            text.append(contentsOf: "0.0.0.0 host\(index).example\n".utf8)
        }
        let parsed = try ListParser.parse(text)
        #expect(parsed.rules.count == 1_000_000)
        #expect(parsed.lineCount == 1_000_000)
        parsed.rules.withName(at: 999_999) { #expect(String(decoding: $0, as: UTF8.self) == "host999999.example") }
    }
}
