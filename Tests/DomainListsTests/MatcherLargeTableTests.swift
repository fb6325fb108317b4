@testable import DomainLists
import Testing

/// Tables of 2 MiB and more are mapped on their own, starting on a huge-page boundary, with a
/// length that is a whole number of small pages rather than of huge pages (SPEC §9: the rounding
/// cost up to 2 MiB per table). Every name must still be found, up to the table's last byte.
@Suite("Matcher: tables past the huge-page size")
struct MatcherLargeTableTests {
    @Test func every_name_of_a_list_whose_tables_end_inside_a_huge_page_is_found() {
        // ~150,000 names make a records table of a few MiB, not a whole number of 2 MiB pages.
        let count = 150_000
        var builder = MatcherBuilder()
        var rules = RuleList()
        for i in 0..<count { rules.append(ListRule(name: DomainName(normalizedText: "n\(i).s\(i % 997).large-table.example"))) }
        builder.add(rules, entry: EntryIndex(0))
        let matcher = builder.build()
        #expect(matcher.nodeCount > count)
        var missing = 0
        for i in 0..<count where !matcher.match("w.n\(i).s\(i % 997).large-table.example").isBlocked { missing += 1 }
        #expect(missing == 0)
        #expect(!matcher.match("n\(count).s0.large-table.example").isBlocked)
        #expect(!matcher.match("large-table.example").isBlocked)
    }
}
