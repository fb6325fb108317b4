#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import DomainLists

/// What adding a list costs in memory beyond the list itself (SPEC §9, memory per name): a name
/// repeated on every line is kept once, and a parsed list handed to the matcher builder as its
/// only owner gives its pages back while its names go in, instead of living whole beside the
/// builder's arrays until the build ends.
@Suite struct ListHandoverMemoryTests {
    @Test func a_name_repeated_on_every_line_is_kept_once_and_still_counted_for_every_line() throws {
        let parsed = try ListParser.parse(String(repeating: "bomb.listmem.example\n", count: 100_000))
        #expect(parsed.rules.count == 1)
        #expect(parsed.rules.repeatsLeftOut == 99_999)
        #expect(parsed.rules.countWithRepeats == 100_000)
        #expect(parsed.summary.hasPrefix("100000 rules from 100000 lines"), "\(parsed.summary)")
        // Before, 100,000 copies: 2.1 MB of names, ends and kinds.
        #expect(parsed.rules.storageBytes < 4096, "\(parsed.rules.storageBytes) bytes for one name")
        var builder = MatcherBuilder()
        builder.add(parsed.rules, entry: EntryIndex(1))
        let matcher = (consume builder).build()
        #expect(Array("www.bomb.listmem.example".utf8).withUnsafeBytes { matcher.match(text: $0) }.isBlocked)
    }

    /// The full path of the parser (hosts and adblock lines, uppercase) drops repeats too, but only
    /// of the rule just before: a name again later, or the same name with another scope or action,
    /// is a rule of its own.
    @Test func only_a_repeat_of_the_rule_just_before_is_left_out_in_every_format() throws {
        let text = """
        0.0.0.0 Bomb.Example
        0.0.0.0 bomb.example
        ||bomb.example^
        |bomb.example^
        |bomb.example^
        @@|bomb.example^
        other.example
        bomb.example
        bomb.example

        """
        let parsed = try ListParser.parse(text)
        #expect(parsed.rules.map(\.description) == [
            ListRule(name: DomainName(normalizedText: "bomb.example")),
            ListRule(name: DomainName(normalizedText: "bomb.example"), scope: .exactName),
            ListRule(name: DomainName(normalizedText: "bomb.example"), scope: .exactName, action: .allow),
            ListRule(name: DomainName(normalizedText: "other.example")),
            ListRule(name: DomainName(normalizedText: "bomb.example")),
        ].map(\.description))
        #expect(parsed.rules.repeatsLeftOut == 4)
        #expect(parsed.rules.countWithRepeats == 9)
        #expect(parsed.summary.hasPrefix("9 rules from 9 lines"), "\(parsed.summary)")
    }

    /// 200,000 distinct names, ~27 bytes each: by the time three quarters of them are in, the pages
    /// of the first half of the names are back with the kernel (before, every page stayed until
    /// the list was dropped after the build), and every name still blocks.
    @Test func a_list_handed_to_the_builder_alone_gives_its_pages_back_while_its_names_go_in() throws {
        var text = ""
        for index in 0..<200_000 { text += "n\(index).s\(index % 97).handoff.example\n" }
        var rules: RuleList? = try ListParser.parse(text).rules
        text = ""
        let (base, byteCount) = Self.nameBytes(of: rules!)
        let page = UInt(PageRelease.pageSize)
        let firstPage = (base + page - 1) & ~(page - 1)
        let halfEnd = (base + UInt(byteCount / 2)) & ~(page - 1)
        let pages = Int((halfEnd - firstPage) / page)
        try #require(pages > 100)
        var residentWhenThreeQuartersIn = -1
        var builder = MatcherBuilder()
        builder.afterBatch = { added in
            guard residentWhenThreeQuartersIn < 0, added >= 150_000 else { return }
            var vector = [UInt8](repeating: 0, count: pages)
            guard mincore(UnsafeMutableRawPointer(bitPattern: firstPage), pages * Int(page), &vector) == 0 else { return }
            residentWhenThreeQuartersIn = vector.reduce(0) { $0 + Int($1 & 1) }
        }
        // Moved out of the optional: the builder holds the one reference.
        builder.add(taking: rules.take()!, entry: EntryIndex(1))
        #expect(residentWhenThreeQuartersIn >= 0, "mincore answered")
        #expect(residentWhenThreeQuartersIn <= pages / 20, "\(residentWhenThreeQuartersIn) of \(pages) pages of the names already read resident")
        builder.afterBatch = nil
        let matcher = builder.build()
        var open: [Int] = []
        for index in 0..<200_000 where !Array("www.n\(index).s\(index % 97).handoff.example".utf8).withUnsafeBytes({ matcher.match(text: $0) }).isBlocked {
            open.append(index)
        }
        #expect(open.isEmpty, "\(open.count) names left open, first \(open.prefix(3))")
    }

    /// Where a list's name bytes lie, and how many there are.
    static func nameBytes(of rules: RuleList) -> (base: UInt, count: Int) {
        rules.withPackedStorage { bytes, _, _ in (UInt(bitPattern: bytes.baseAddress!), bytes.count) }
    }

    /// A list another copy still holds is only read: its pages must stay, or that copy would lose
    /// its names (fail open).
    @Test func a_list_handed_to_the_builder_while_another_copy_holds_it_keeps_every_name() throws {
        var text = ""
        for index in 0..<100_000 { text += "n\(index).shared.example\n" }
        let kept = try ListParser.parse(text).rules
        var builder = MatcherBuilder()
        builder.add(taking: kept, entry: EntryIndex(1))
        _ = (consume builder).build()
        var lost: [Int] = []
        for index in 0..<100_000 where kept[index].name.text != "n\(index).shared.example" { lost.append(index) }
        #expect(lost.isEmpty, "\(lost.count) names of the kept copy changed, first \(lost.prefix(3))")
    }
}
