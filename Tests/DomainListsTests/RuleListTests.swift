import Testing
@testable import DomainLists

/// The packed rule list's own operations: what a held refresh (SPEC §3) and `parseLists` use.
@Suite struct RuleListTests {
    static func rules(_ text: String) throws -> RuleList { try ListParser.parse(text).rules }

    @Test func subtracting_keeps_the_rules_the_other_list_lacks_in_order_and_once() throws {
        let old = try Self.rules("a.example\n||b.example^\n|c.example^\n*.d.example\n@@||e.example^\na.example\nf.example\n")
        let new = try Self.rules("a.example\nb.example\n")
        let dropped = old.subtracting(new)
        #expect(dropped.map(\.description) == [
            "block c.example (exact name)", "block d.example (subdomains only)",
            "allow e.example (name and subdomains)", "block f.example (name and subdomains)",
        ])
    }

    @Test func subtracting_tells_scope_and_action_apart_for_the_same_name() throws {
        let old = try Self.rules("||x.example^\n|x.example^\n||*.x.example^\n@@||x.example^\n")
        let new = try Self.rules("x.example\n")
        #expect(old.subtracting(new).map(\.description) == [
            "block x.example (exact name)", "block x.example (subdomains only)", "allow x.example (name and subdomains)",
        ])
    }

    @Test func subtracting_a_list_from_itself_or_from_a_superset_leaves_nothing() throws {
        let list = try Self.rules((0..<5000).map { "n\($0).example" }.joined(separator: "\n"))
        #expect(list.subtracting(list).isEmpty)
        var bigger = list
        bigger.append(contentsOf: try Self.rules("extra.example\n"))
        #expect(list.subtracting(bigger).isEmpty)
        #expect(bigger.subtracting(list).map(\.description) == ["block extra.example (name and subdomains)"])
    }

    @Test func subtracting_matches_a_set_difference_over_many_names() throws {
        let old = try Self.rules((0..<20000).map { "n\($0).s\($0 % 97).example" }.joined(separator: "\n"))
        let new = try Self.rules((0..<20000).filter { $0 % 7 != 0 }.map { "n\($0).s\($0 % 97).example" }.joined(separator: "\n"))
        let kept = Set(new)
        let expected = Array(old).filter { !kept.contains($0) }
        #expect(Array(old.subtracting(new)) == expected)
        #expect(expected.count == 2858)
    }

    @Test func append_contents_of_keeps_both_lists_rules_in_order() throws {
        var first = try Self.rules("a.example\n|b.example^\n")
        let second = try Self.rules("@@||c.example^\n*.d.example\n")
        first.append(contentsOf: second)
        #expect(first.map(\.description) == [
            "block a.example (name and subdomains)", "block b.example (exact name)",
            "allow c.example (name and subdomains)", "block d.example (subdomains only)",
        ])
        #expect(first == RuleList(Array(try Self.rules("a.example\n|b.example^\n")) + Array(second)))
    }
}
