import Testing
@testable import DomainLists

/// The realistic synthetic lists in Fixtures/lists, one per format (written by
/// Fixtures/make-lists.py). Each file states what a correct parse finds in `expect-…` lines,
/// counted by the generator while writing, and marks its deliberately bad lines with "planted".
struct FixtureListTests {
    static let files = ["hosts.txt", "adblock.txt", "plain.txt", "wildcard.txt"]

    @Test("fixture parses to the stated format and rule count, bad lines where planted", arguments: files)
    func fixture(_ file: String) throws {
        let bytes = try readFixture("lists/" + file)
        let parsed = try ListParser.parse(bytes)
        let format = try #require(expectations(bytes, "format").first)
        #expect(parsed.formats.dominant?.rawValue == format)
        #expect(parsed.rules.count == Int(try #require(expectations(bytes, "rules").first)))
        #expect(parsed.badLines.map(\.lineNumber) == lineNumbers(containing: "planted", in: bytes))
        #expect(parsed.lineCount == physicalLines(bytes).count)
    }

    @Test func hosts_fixture_skips_the_machine_names_and_encodes_idn() throws {
        let bytes = try readFixture("lists/hosts.txt")
        let parsed = try ListParser.parse(bytes)
        #expect(parsed.skipped.localNames == Int(try #require(expectations(bytes, "local-names").first)))
        let names = Set(parsed.rules.map(\.name.text))
        for expected in expectations(bytes, "name") { #expect(names.contains(expected), "\(expected)") }
        #expect(!names.contains("localhost"))
        #expect(names.allSatisfy { $0 == $0.lowercased() && !$0.hasSuffix(".") })
    }

    @Test func adblock_fixture_counts_what_it_sets_aside() throws {
        let bytes = try readFixture("lists/adblock.txt")
        let parsed = try ListParser.parse(bytes)
        #expect(parsed.skipped.cosmetic == Int(try #require(expectations(bytes, "cosmetic").first)))
        #expect(parsed.skipped.unsupported == Int(try #require(expectations(bytes, "unsupported").first)))
        #expect(parsed.skipped.optionsIgnored == Int(try #require(expectations(bytes, "options-ignored").first)))
        // Every `@@` line became an allow rule.
        let allowLines = physicalLines(bytes).filter { $0.hasPrefix("@@") }.count
        #expect(parsed.rules.filter { $0.action == .allow }.count == allowLines)
    }

    @Test func plain_fixture_with_a_byte_order_mark_encodes_idn() throws {
        let bytes = try readFixture("lists/plain.txt")
        #expect(bytes.starts(with: [0xEF, 0xBB, 0xBF]))
        let names = Set(try ListParser.parse(bytes).rules.map(\.name.text))
        for expected in expectations(bytes, "name") { #expect(names.contains(expected), "\(expected)") }
    }

    @Test func wildcard_fixture_rules_cover_subdomains_only() throws {
        let bytes = try readFixture("lists/wildcard.txt")
        let parsed = try ListParser.parse(bytes)
        let wildcards = parsed.rules.filter { $0.scope == .subdomainsOnly }
        #expect(wildcards.count == Int(try #require(expectations(bytes, "wildcard-lines").first)))
        var builder = MatcherBuilder()
        builder.add(parsed.rules, entry: 1)
        let matcher = builder.build()
        for rule in wildcards {
            #expect(matcher.match("sub." + rule.name.text).isBlocked)
            // The apex is blocked only if the list also names it plainly.
            let apexListed = parsed.rules.contains { $0.scope == .nameAndSubdomains && $0.name == rule.name }
            #expect(matcher.match(rule.name.text).isBlocked == apexListed, "\(rule.name)")
        }
    }

    @Test func every_fixture_rule_blocks_through_the_matcher() throws {
        var builder = MatcherBuilder()
        var all: [ListRule] = []
        for file in Self.files {
            let rules = try ListParser.parse(try readFixture("lists/" + file)).rules
            builder.add(rules, entry: 1)
            all += rules
        }
        let matcher = builder.build()
        var reference = ReferenceMatcher()
        for rule in all {
            if rule.action == .allow { reference.allows.append((rule.name.text, rule.scope)) } else {
                reference.blocks.append((rule.name.text, rule.scope, 1))
            }
        }
        for rule in all {
            for query in [rule.name.text, "www." + rule.name.text] {
                let expected = reference.match(query)
                let result = matcher.match(query)
                #expect(result.isAllowed == expected.allowed, "\(query)")
                #expect(matcher.entries(of: result.entrySet) == expected.entries, "\(query)")
            }
        }
    }
}
