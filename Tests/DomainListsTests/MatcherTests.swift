import TestSupport
import Testing
@testable import DomainLists

/// Builds a matcher from compact rule strings: `name` (name and subdomains, for entry `entry`),
/// `=name` (exact), `*.name` (subdomains only); a leading `+` makes an allow rule. `wideAnswers`
/// stores 4-byte answers, which the builder otherwise chooses only past 32,768 entry sets.
func matcher(_ rules: [(String, EntryIndex)], wideAnswers: Bool = false) throws -> DomainMatcher {
    var builder = MatcherBuilder()
    for (rule, entry) in rules {
        var text = Substring(rule)
        let allow = text.hasPrefix("+")
        if allow { text = text.dropFirst() }
        var scope = MatchScope.nameAndSubdomains
        if text.hasPrefix("=") {
            scope = .exactName
            text = text.dropFirst()
        } else if text.hasPrefix("*.") {
            scope = .subdomainsOnly
            text = text.dropFirst(2)
        }
        let name = try DomainName(text)
        if allow { builder.allow(name, scope: scope) } else { builder.add(name, scope: scope, entry: entry) }
    }
    return builder.build(wideAnswers: wideAnswers)
}

struct MatcherSemanticsTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var query: String
        var entries: [UInt32]
        var allowed: Bool
        var testDescription: String { query.debugDescription }
        init(_ query: String, _ entries: [UInt32], allowed: Bool = false) {
            self.query = query
            self.entries = entries
            self.allowed = allowed
        }
    }

    /// instagram = 1, tracker = 2, wild = 3, exact = 4, a second list naming instagram = 5.
    static let rules: [(String, EntryIndex)] = [
        ("instagram.com", 1), ("cdninstagram.com", 1), ("tracker.example", 2), ("www.instagram.com", 5),
        ("*.wild.example", 3), ("=exact.example", 4),
        ("blocked.example", 2), ("+open.blocked.example", 0),
        ("+=door.blocked.example", 0), ("+*.hall.blocked.example", 0),
    ]

    @Test("semantics", arguments: [
        // The name itself and every name under it (SPEC §1).
        Case("instagram.com", [1]),
        Case("i.instagram.com", [1]),
        Case("a.b.c.instagram.com", [1]),
        Case("www.instagram.com", [1, 5]),
        Case("static.www.instagram.com", [1, 5]),
        // A suffix of the text is not a parent domain.
        Case("notinstagram.com", []),
        Case("instagram.com.evil.example", []),
        Case("com", []),
        Case("example", []),
        Case("cdninstagram.com", [1]),
        // Case-insensitive, one trailing dot ignored.
        Case("WWW.Instagram.COM", [1, 5]),
        Case("instagram.com.", [1]),
        Case("I.INSTAGRAM.COM.", [1]),
        // Wildcards cover subdomains, never the apex.
        Case("wild.example", []),
        Case("a.wild.example", [3]),
        Case("a.b.wild.example", [3]),
        // Exact rules cover the name only.
        Case("exact.example", [4]),
        Case("www.exact.example", []),
        // Allow beats block, on the name and everything under it, nothing beside it.
        Case("blocked.example", [2]),
        Case("x.blocked.example", [2]),
        Case("open.blocked.example", [2], allowed: true),
        Case("deep.open.blocked.example", [2], allowed: true),
        Case("door.blocked.example", [2], allowed: true),
        Case("in.door.blocked.example", [2]),
        Case("hall.blocked.example", [2]),
        Case("room.hall.blocked.example", [2], allowed: true),
        // Malformed text never matches.
        Case("", []),
        Case(".", []),
        Case("instagram..com", []),
        Case("..instagram.com", [1]),
    ])
    func semantics(_ testCase: Case) throws {
        let matcher = try matcher(Self.rules)
        let result = matcher.match(testCase.query)
        #expect(matcher.entries(of: result.entrySet).map(\.rawValue) == testCase.entries)
        #expect(result.isAllowed == testCase.allowed)
        #expect(result.isBlocked == (!testCase.allowed && !testCase.entries.isEmpty))
        // Wire format gives the same answer for every well-formed name.
        if !testCase.query.isEmpty, !testCase.query.contains(".."), testCase.query != "." {
            let bytes = wire(testCase.query)
            let wireResult = bytes.withUnsafeBytes { matcher.match(wire: $0) }
            #expect(wireResult == result)
        }
    }

    @Test func equal_entry_sets_share_one_id() throws {
        let matcher = try matcher([("a.example", 7), ("b.example", 7), ("c.example", 8)])
        #expect(matcher.match("a.example").entrySet == matcher.match("b.example").entrySet)
        #expect(matcher.match("a.example").entrySet != matcher.match("c.example").entrySet)
        #expect(matcher.match("unlisted.example").entrySet == .none)
        #expect(matcher.entrySets[0].isEmpty)
        // Only sets some answer uses are published: {}, {7}, {8}.
        #expect(matcher.entrySets.count == 3)
    }

    @Test func an_allow_rule_alone_allows_without_entries() throws {
        let matcher = try matcher([("+ok.example", 0)])
        #expect(matcher.match("www.ok.example") == MatchResult(entrySet: .none, isAllowed: true))
        #expect(!matcher.match("www.ok.example").isBlocked)
    }

    @Test func the_same_rule_twice_changes_nothing() throws {
        let once = try matcher([("x.example", 1)])
        let twice = try matcher([("x.example", 1), ("x.example", 1), ("X.Example.", 1)])
        #expect(twice.match("a.x.example") == once.match("a.x.example"))
        #expect(twice.entrySets == once.entrySets)
        #expect(twice.nodeCount == once.nodeCount)
    }

    @Test func an_empty_matcher_matches_nothing() {
        let empty = DomainMatcher()
        #expect(empty.match("example.com") == .noMatch)
        #expect(wire("example.com").withUnsafeBytes { empty.match(wire: $0) } == .noMatch)
    }

    @Test func wire_names_are_matched_in_any_case_and_malformed_ones_never_match() throws {
        let matcher = try matcher([("instagram.com", 1)])
        let mixedCase = wire("wWw.InStAgRaM.cOm")
        #expect(mixedCase.withUnsafeBytes { matcher.match(wire: $0) }.isBlocked)
        let malformed: [[UInt8]] = [
            [],                                                   // nothing
            [0],                                                  // the root
            [9] + Array("instagram".utf8) + [3] + Array("com".utf8),   // no terminating zero
            [9] + Array("instagram".utf8) + [0xC0, 0x0C],         // a compression pointer
            [64] + Array(repeating: UInt8(ascii: "a"), count: 64) + [0],  // a label over 63
            [20] + Array("short".utf8),                           // a length past the end
        ]
        for bytes in malformed {
            #expect(bytes.withUnsafeBytes { matcher.match(wire: $0) } == .noMatch, "\(bytes)")
        }
    }

    @Test func names_at_the_length_limits_match() throws {
        let longLabel = String(repeating: "x", count: 63)
        let deep = (0..<60).map { _ in "a" }.joined(separator: ".") + ".deep.example"
        let matcher = try matcher([("\(longLabel).example", 1), (deep, 2)])
        #expect(matcher.match("www.\(longLabel).example").isBlocked)
        #expect(matcher.entries(of: matcher.match(deep).entrySet) == [2])
        #expect(matcher.entries(of: matcher.match("b." + deep).entrySet) == [2])
        #expect(!matcher.match(String(deep.dropFirst(2))).isBlocked)
        // Longer than any stored name can be, or nothing but dots: no match, no crash.
        #expect(matcher.match(String(repeating: "a.", count: 200) + "example") == .noMatch)
        #expect(matcher.match(String(repeating: ".", count: 253)) == .noMatch)
        #expect(matcher.match(String(repeating: "a.", count: 126) + "a") == .noMatch)
    }

    @Test func non_ascii_queries_do_not_match_but_their_a_labels_do() throws {
        let matcher = try matcher([("bücher.example", 1)])
        #expect(matcher.match("xn--bcher-kva.example").isBlocked)
        #expect(matcher.match("www.xn--bcher-kva.example").isBlocked)
        #expect(!matcher.match("bücher.example").isBlocked)
    }

    @Test func parsed_lists_feed_the_builder_with_their_allow_rules() throws {
        let parsed = try ListParser.parse("||ads.example^\n@@||ok.ads.example^\n|exact.example^\n*.wild.example\n")
        var builder = MatcherBuilder()
        builder.add(parsed.rules, entry: 9)
        let allowList = try ListParser.parse("mirror.ads.example\n")
        builder.allowAll(allowList.rules)
        let matcher = builder.build()
        #expect(matcher.match("x.ads.example").isBlocked)
        #expect(matcher.match("ok.ads.example").isAllowed)
        #expect(matcher.match("mirror.ads.example").isAllowed)
        #expect(matcher.match("exact.example").isBlocked)
        #expect(!matcher.match("www.exact.example").isBlocked)
        #expect(matcher.match("a.wild.example").isBlocked)
        #expect(!matcher.match("wild.example").isBlocked)
        #expect(matcher.ruleCount == 5)
    }
}

struct MatcherAgainstReferenceTests {
    /// Random rules over a small alphabet of labels (so names collide and nest often), checked
    /// query by query against the slow reference model, with 2-byte answers and with 4-byte ones.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64], [false, true])
    func random_rules_match_the_reference_model(seed: UInt64, wideAnswers: Bool) throws {
        var random = SplitMix64(state: seed)
        // Short labels collide and nest often; 8- and 14-byte ones take the word-at-a-time hash
        // path; 63 bytes is the longest a record holds.
        let labels = ["a", "b", "ab", "www", "cdn", "x-y", "_t", "com", "net", "example", "abcdefgh", "cdn-edge-cache",
                      String(repeating: "l", count: 63)]
        func name(_ depth: Int) -> String {
            while true {
                let name = (0..<depth).map { _ in labels.randomElement(using: &random) ?? "a" }.joined(separator: ".")
                // Within a DNS name's 253 characters (RFC 1035 §2.3.4), which `DomainName` enforces.
                if name.utf8.count <= 253 { return name }
            }
        }
        var reference = ReferenceMatcher()
        var builder = MatcherBuilder()
        for _ in 0..<300 {
            let text = name(Int.random(in: 1...4, using: &random))
            let scope = MatchScope.allCases.randomElement(using: &random) ?? .nameAndSubdomains
            let domain = try DomainName(text)
            if Int.random(in: 0..<6, using: &random) == 0 {
                builder.allow(domain, scope: scope)
                reference.allows.append((domain.text, scope))
            } else {
                let entry = EntryIndex(UInt32.random(in: 0..<12, using: &random))
                builder.add(domain, scope: scope, entry: entry)
                reference.blocks.append((domain.text, scope, entry))
            }
        }
        let matcher = builder.build(wideAnswers: wideAnswers)
        #expect(matcher.answerWidth == (wideAnswers ? 4 : 2))
        for _ in 0..<3000 {
            var query = name(Int.random(in: 1...6, using: &random))
            if Bool.random(using: &random) { query = query.uppercased() }
            if Bool.random(using: &random) { query += "." }
            let expected = reference.match(query)
            let result = matcher.match(query)
            #expect(matcher.entries(of: result.entrySet) == expected.entries, "\(query)")
            #expect(result.isAllowed == expected.allowed, "\(query)")
            let wireResult = wire(query).withUnsafeBytes { matcher.match(wire: $0) }
            #expect(wireResult == result, "\(query)")
        }
    }
}

struct SuffixHashTests {
    @Test func word_lowercasing_matches_byte_lowercasing_for_every_byte_in_every_position() {
        for byte in 0...255 {
            for position in 0..<8 {
                let filler: UInt64 = 0x4161_7A5A_405B_607B  // 'A','a','z','Z','@','[','`','{' around the edges
                let shift = UInt64(position * 8)
                let word = (filler & ~(0xFF << shift)) | (UInt64(byte) << shift)
                var expected: UInt64 = 0
                for index in 0..<8 {
                    let original = UInt8(truncatingIfNeeded: word >> UInt64(index * 8))
                    expected |= UInt64(DomainNormalizer.lowercased(original)) << UInt64(index * 8)
                }
                #expect(SuffixHash.lowercasedWord(word) == expected, "byte \(byte) at \(position)")
            }
        }
    }

    @Test func hashes_ignore_ascii_case_and_tell_lengths_apart() {
        func hash(_ text: String) -> UInt64 {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBufferPointer { SuffixHash.extend(SuffixHash.root, label: $0.baseAddress!, count: $0.count) }
        }
        #expect(hash("CDN-Edge-Cache") == hash("cdn-edge-cache"))
        #expect(hash("abcdefgh") != hash("abcdefg"))
        #expect(hash("abcdefgh") != hash("abcdefgh\u{0}"))
    }
}
