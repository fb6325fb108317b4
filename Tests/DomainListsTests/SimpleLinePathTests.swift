import Testing
@testable import DomainLists

/// SPEC §9: the parser takes `name` and `0.0.0.0 name` lines in one pass (`LineClassifier.simpleRule`,
/// `RuleList.appendIfSimpleName`) and the builder adds a list a batch at a time
/// (`MatcherBuilder.add(_:entry:)`). Both must give exactly what the full path gives; these tests
/// compare the two on many generated lines and names, the awkward ones included.
@Suite("Simple-line parse and batched build: same results as the full path")
struct SimpleLinePathTests {
    /// A small deterministic generator, so a failure names the same token every run.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    /// Tokens built from the pieces that decide the path: case, digits, `-`, `_`, dots (leading,
    /// doubled, trailing), `xn--` labels good and bad, long labels and names, non-UTF-8 and
    /// UTF-8 bytes, `*`, `:`, the machine's own names, all-digit last labels.
    static func tokens(count: Int) -> [[UInt8]] {
        var random = Generator(state: 15)
        let pieces: [[UInt8]] = [
            "ads", "Tracker", "CDN", "x", "a1", "007", "-", "_dmarc", "xn--bcher-kva", "xn--zz", "xn--",
            "münchen", "\u{3002}", "localhost", "localdomain", "com", "NET", "10", "255", "*", ":", "::1",
        ].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xC3, 0xA9], Array(repeating: UInt8(ascii: "q"), count: 63),
                                  Array(repeating: UInt8(ascii: "w"), count: 64)]
        var result: [[UInt8]] = [
            Array("localhost.localdomain".utf8), Array("LOCALHOST.localdomain".utf8), Array("localhost".utf8),
            Array("1.2.3.4".utf8), Array("0.0.0.0".utf8), Array("example.com.".utf8), Array(".example.com".utf8),
            Array("example..com".utf8), Array("a.b".utf8), Array("1.b".utf8), Array("b.1".utf8), Array("b.1a".utf8),
            Array((Array(repeating: "abcdefghi", count: 25).joined(separator: ".") + ".com").utf8),
            Array((Array(repeating: "abcdefghi", count: 26).joined(separator: ".")).utf8),
        ]
        for _ in 0..<count {
            var token: [UInt8] = []
            for label in 0..<(1 + random.next(5)) {
                if label > 0 { token.append(UInt8(ascii: ".")) }
                // Mostly the plain pieces (the first six), so that many tokens are simple names.
                for _ in 0..<(1 + random.next(2)) { token += pieces[random.next(4) == 0 ? random.next(pieces.count) : random.next(6)] }
            }
            if random.next(10) == 0 { token.append(UInt8(ascii: ".")) }
            result.append(token)
        }
        return result
    }

    /// The parse of one list made of `lines`, with a budget that never rejects it.
    static func parse(_ lines: [[UInt8]]) throws -> ParsedList {
        var text: [UInt8] = []
        for line in lines { text += line + [UInt8(ascii: "\n")] }
        return try ListParser.parse(text, options: ListParseOptions(budget: BadLineBudget(perThousandLines: 1000), allowEmpty: true))
    }

    static func expectSame(_ fast: ParsedList, _ full: ParsedList, _ comment: Comment) {
        #expect(Array(fast.rules) == Array(full.rules), comment)
        #expect(fast.formats == full.formats, comment)
        #expect(fast.skipped == full.skipped, comment)
        #expect(fast.badLines == full.badLines, comment)
        #expect(fast.badLineCount == full.badLineCount, comment)
        #expect(fast.lineCount == full.lineCount, comment)
    }

    @Test func a_line_and_the_same_line_with_a_comment_which_takes_the_full_path_parse_alike() throws {
        // A trailing comment sends a line down the full path and changes nothing else about it.
        let tokens = Self.tokens(count: 1500)
        var simple = 0
        for token in tokens {
            for prefix in [[], Array("0.0.0.0 ".utf8), Array("127.0.0.1\t".utf8), Array("  0.0.0.0   ".utf8)] as [[UInt8]] {
                for suffix in [[], [0x0D], Array("  ".utf8)] as [[UInt8]] {
                    let line = prefix + token + suffix
                    let fast = try Self.parse([line])
                    let full = try Self.parse([line + Array(" # the full path".utf8)])
                    Self.expectSame(fast, full, "\(String(decoding: line, as: UTF8.self).debugDescription)")
                }
            }
            var probe = RuleList()
            if token.withUnsafeBufferPointer({ probe.appendIfSimpleName($0) }) { simple += 1 }
        }
        // Both paths ran: many tokens take the simple one, many do not.
        #expect(simple > tokens.count / 10)
        #expect(simple < tokens.count * 9 / 10)
    }

    @Test func a_simple_name_is_stored_as_the_domain_name_normalizer_writes_it_and_others_leave_nothing() throws {
        for token in Self.tokens(count: 3000) {
            var rules = RuleList()
            rules.append(ListRule(name: try DomainName("before.example")))
            let taken = token.withUnsafeBufferPointer { rules.appendIfSimpleName($0) }
            let text = String(decoding: token, as: UTF8.self)
            if taken {
                #expect(rules.count == 2)
                #expect(rules[1] == ListRule(name: try DomainName(text)), "\(text.debugDescription)")
            } else {
                #expect(Array(rules) == [ListRule(name: try DomainName("before.example"))], "\(text.debugDescription)")
            }
        }
    }

    @Test func crlf_a_missing_final_newline_a_long_line_and_non_utf8_bytes_parse_as_the_full_path_does() throws {
        let lines: [[UInt8]] = [
            Array("ads.example.com\r".utf8), Array("0.0.0.0 Tracker.Example.NET\r".utf8), Array("# comment".utf8),
            Array("||adblock.example^".utf8), [0xFF, 0x2E, 0x63, 0x6F, 0x6D], Array(repeating: UInt8(ascii: "a"), count: 5000),
            Array("*.wild.example".utf8), Array("last.example".utf8),
        ]
        var text: [UInt8] = []
        for (index, line) in lines.enumerated() {
            text += line
            if index < lines.count - 1 { text.append(UInt8(ascii: "\n")) }
        }
        let options = ListParseOptions(budget: BadLineBudget(perThousandLines: 1000))
        let parsed = try ListParser.parse(text, options: options)
        #expect(parsed.rules.map(describe) == ["ads.example.com", "tracker.example.net", "adblock.example", "*.wild.example", "last.example"])
        #expect(parsed.badLines.map(\.lineNumber) == [5, 6])
        #expect(parsed.formats.plain == 2 && parsed.formats.hosts == 1 && parsed.formats.adblock == 1 && parsed.formats.wildcard == 1)
        // The same lines, each forced down the full path by a comment, in chunks of 7 bytes.
        var forced: [UInt8] = []
        for (index, line) in lines.enumerated() {
            let body = line.last == 0x0D ? Array(line.dropLast()) : line
            forced += body + (index == 5 || index == 2 || index == 3 ? [] : Array(" #x".utf8)) + (line.last == 0x0D ? [0x0D] : [])
            if index < lines.count - 1 { forced.append(UInt8(ascii: "\n")) }
        }
        var parser = ListParser(options: options)
        var offset = 0
        while offset < forced.count {
            parser.consume(Array(forced[offset..<min(offset + 7, forced.count)]))
            offset += 7
        }
        Self.expectSame(parsed, try parser.finish(), "forced")
    }

    /// Names for the builder, rules in every scope and action, some the builder itself must cope
    /// with (uppercase, empty labels, a label over 63 bytes, dots only), as `RuleList` can carry them.
    static func builderRules(_ seed: UInt64, count: Int) -> RuleList {
        var random = Generator(state: seed)
        let labels = ["com", "net", "example", "ads", "cdn", "www", "Tracker", "a", "b"]
        var rules = RuleList()
        let odd = ["Upper.Example.COM", "a..b.example", ".", "..", "", String(repeating: "z", count: 64) + ".example",
                   String(repeating: "y", count: 63) + ".example", "com"]
        for index in 0..<count {
            var name: String
            if index % 13 == 5 {
                // Every odd name in turn, so each is in the larger lists.
                name = odd[(index / 13) % odd.count]
            } else {
                name = (0..<(1 + random.next(4))).map { _ in labels[random.next(labels.count)] + (random.next(3) == 0 ? "\(random.next(500))" : "") }
                    .joined(separator: ".")
            }
            rules.append(normalizedName: Array(name.utf8), scope: MatchScope.allCases[random.next(3)],
                         action: random.next(8) == 0 ? .allow : .block)
        }
        return rules
    }

    @Test(arguments: [1, 31, 32, 33, 2000] as [Int])
    func a_list_added_in_batches_builds_the_matcher_adding_its_names_one_by_one_builds(count: Int) throws {
        let lists = [Self.builderRules(1, count: count), Self.builderRules(2, count: count / 2 + 1)]
        let allowed = Self.builderRules(3, count: 40)
        var batched = MatcherBuilder()
        var single = MatcherBuilder()
        // A name added before the lists, so the batches also meet nodes that exist already.
        for builder in [0, 1] {
            let name = Array("ads.example".utf8)
            name.withUnsafeBufferPointer {
                if builder == 0 { batched.add(normalizedName: $0, scope: .nameAndSubdomains, entry: EntryIndex(9)) }
                else { single.add(normalizedName: $0, scope: .nameAndSubdomains, entry: EntryIndex(9)) }
            }
        }
        for (entry, rules) in lists.enumerated() {
            batched.add(rules, entry: EntryIndex(UInt32(entry)))
            for index in rules.indices {
                let scope = rules.scope(at: index)
                let action = rules.action(at: index)
                rules.withName(at: index) { name in
                    if action == .allow { single.allow(normalizedName: name, scope: scope) }
                    else { single.add(normalizedName: name, scope: scope, entry: EntryIndex(UInt32(entry))) }
                }
            }
        }
        batched.allowAll(allowed)
        for index in allowed.indices {
            let scope = allowed.scope(at: index)
            allowed.withName(at: index) { single.allow(normalizedName: $0, scope: scope) }
        }
        let a = batched.build(), b = single.build()
        #expect(a.nodeCount == b.nodeCount)
        #expect(a.ruleCount == b.ruleCount)
        #expect(a.recordBytes == b.recordBytes)
        #expect(a.entrySets == b.entrySets)
        var queries = ["ads.example", "x.ads.example", "upper.example.com", "a.b.example", "example", "com", "nothing.here"]
        for rules in lists + [allowed] {
            for index in rules.indices {
                let name = rules.withName(at: index) { String(decoding: $0, as: UTF8.self) }
                queries += [name, "sub." + name, "deep.sub." + name]
            }
        }
        for query in queries {
            #expect(a.match(query) == b.match(query), "\(query)")
        }
    }
}
