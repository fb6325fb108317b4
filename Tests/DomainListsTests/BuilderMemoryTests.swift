import Synchronization
import Testing
@testable import DomainLists

/// What a matcher build costs in memory follows the list's distinct names, not its rule count: a
/// list of one name repeated millions of times (a gzip bomb that stays under the download cap)
/// must not make a table for millions of names resident.
@Suite struct BuilderMemoryTests {
    /// `count` copies of one rule, made by doubling (`append(contentsOf:)`), not one by one.
    static func repeated(_ name: String, count: Int) -> RuleList {
        var rules = RuleList([ListRule(name: DomainName(normalizedText: name))])
        while rules.count * 2 <= count { rules.append(contentsOf: rules) }
        var rest = RuleList()
        for _ in rules.count..<count { rest.append(ListRule(name: DomainName(normalizedText: name))) }
        rules.append(contentsOf: rest)
        return rules
    }

    @Test func a_list_of_one_name_repeated_two_million_times_keeps_only_a_few_pages_of_the_probe_table_resident() {
        let rules = Self.repeated("bomb.listmem.example", count: 2_000_000)
        #expect(rules.count == 2_000_000)
        var builder = MatcherBuilder()
        builder.add(rules, entry: EntryIndex(1))
        // The table is sized for the rule count (one rehash, not twenty, for a list of distinct
        // names): 32 MiB of address space. Three names were stored (example, listmem.example,
        // bomb.listmem.example): a few of its pages were written, the rest never became resident.
        // Before, the whole table was written with zeros: 32 MiB resident for three names.
        #expect(builder.tableBytes >= 16 << 20)
        #expect(builder.tableResidentBytes <= 16 * PageRelease.pageSize,
                "\(builder.tableResidentBytes) bytes of the probe table resident for 3 names")
        let matcher = (consume builder).build()
        #expect(matcher.nodeCount == 3)
        #expect(matcher.ruleCount == 2_000_000)
        let hit = Array("www.bomb.listmem.example".utf8).withUnsafeBytes { matcher.match(text: $0) }
        #expect(hit.isBlocked)
    }

    @Test func a_list_of_distinct_names_makes_its_probe_table_resident_as_it_fills() {
        var rules = RuleList()
        for index in 0..<200_000 { rules.append(ListRule(name: DomainName(normalizedText: "n\(index).example.com"))) }
        var builder = MatcherBuilder()
        builder.add(rules, entry: EntryIndex(1))
        // 200,002 nodes in at most 4/3 of a slot each: the table is as full as it is resident.
        #expect(builder.tableBytes <= 4 << 20)
        #expect(builder.tableResidentBytes >= builder.tableBytes / 2)
    }

    /// SPEC §9 (memory per name), the boundaries review's bound: what a build holds at its peak
    /// is at most twice what the matcher it makes holds. The builder's peak is when the last name
    /// is in: its records, its per-node answers and its probe table. Before, it also kept each
    /// node's parent, record offset and hash (16 bytes a name), all of which its records already
    /// give, in a table of 64-bit slots: ~62 bytes a name here against the matcher's ~24.
    @Test func a_builder_with_every_name_in_holds_at_most_twice_what_its_matcher_holds() {
        var rules = RuleList()
        for index in 0..<200_000 { rules.append(ListRule(name: DomainName(normalizedText: "n\(index).example.com"))) }
        var builder = MatcherBuilder()
        builder.add(rules, entry: EntryIndex(1))
        let held = builder.nodeBytes + builder.tableResidentBytes
        let besidesRecords = builder.nodeBytes - builder.recordBytes
        let matcher = (consume builder).build()
        #expect(matcher.nodeCount == 200_002)
        let perName = { (bytes: Int) in Double(bytes) / Double(matcher.nodeCount) }
        #expect(held <= 2 * matcher.tableBytes,
                "the builder held \(perName(held)) bytes a name, the matcher holds \(perName(matcher.tableBytes))")
        // Besides its records and its probe table, 9 bytes a name: two entry-set ids and the allowed bits.
        #expect(besidesRecords <= 9 * matcher.nodeCount, "\(perName(besidesRecords)) bytes a name besides the records")
    }

    /// The probe table's slots are 32 bits: a record offset in the low bits, a tag above. Names
    /// added one at a time (no list to reserve for) outgrow the offset bits the table started
    /// with (128 KiB of records) several times over; each time it rehashes with wider offsets,
    /// hashing every record again from its labels, and every name must still be found, none twice.
    @Test func names_added_one_at_a_time_past_the_tables_offset_bits_are_all_found_once() {
        var builder = MatcherBuilder()
        for index in 0..<30_000 { builder.add(DomainName(normalizedText: "name-\(index).s\(index % 31).one-by-one.example"), entry: EntryIndex(1)) }
        // Again: each name must find the node it made, not make a second one.
        for index in stride(from: 0, to: 30_000, by: 7) {
            builder.add(DomainName(normalizedText: "name-\(index).s\(index % 31).one-by-one.example"), entry: EntryIndex(2))
        }
        #expect(builder.recordBytes > 4 << 17, "\(builder.recordBytes) bytes of records")
        let matcher = builder.build()
        #expect(matcher.nodeCount == 30_000 + 31 + 2)
        var wrong: [Int] = []
        for index in 0..<30_000 {
            let result = matcher.match("www.name-\(index).s\(index % 31).one-by-one.example")
            let expected: [UInt32] = index % 7 == 0 ? [1, 2] : [1]
            if matcher.entrySets[Int(result.entrySet.rawValue)].map(\.rawValue) != expected { wrong.append(index) }
        }
        #expect(wrong.isEmpty, "\(wrong.count) names answered wrongly, first \(wrong.prefix(3))")
        #expect(!matcher.match("name-30000.s0.one-by-one.example").isBlocked)
    }

    /// `build()` hands itself on to the build with `consume`: before, the inner call got a copy
    /// while the outer frame kept the original, so no array was held alone, the first pass
    /// copied the per-node arrays and nothing went back as it was read (at 5,000,000 names 45 MiB
    /// of copies at the build's start, `strace`).
    @Test func a_builder_consumed_by_build_holds_its_arrays_alone_so_they_go_back_as_they_are_read() {
        // In an optional, moved out whole (`take`), as `MatcherTables.build` consumes its builder.
        var builder: MatcherBuilder? = MatcherBuilder()
        builder!.add(RuleList((0..<1000).map { ListRule(name: DomainName(normalizedText: "n\($0).example.com")) }), entry: EntryIndex(1))
        let alone = Mutex<Bool?>(nil)
        builder!.startsBuild = { sole in alone.withLock { $0 = sole } }
        let matcher = builder.take()!.build()
        #expect(alone.withLock { $0 } == true)
        #expect(matcher.match("www.n999.example.com").isBlocked)
    }

    /// `build` hands back the records and per-node arrays it has read while it writes the
    /// matcher's records (when it is the builder's only copy): every name must still be there.
    @Test func a_builder_that_hands_back_what_it_has_read_still_builds_every_name_and_answer() {
        var rules = RuleList()
        for index in 0..<150_000 { rules.append(ListRule(name: DomainName(normalizedText: "n\(index).s\(index % 97).example.com"))) }
        var allow = RuleList()
        for index in stride(from: 0, to: 150_000, by: 1000) {
            allow.append(ListRule(name: DomainName(normalizedText: "n\(index).s\(index % 97).example.com")))
        }
        var builder = MatcherBuilder()
        builder.add(rules, entry: EntryIndex(1))
        builder.add(RuleList([ListRule(name: DomainName(normalizedText: "s5.example.com"))]), entry: EntryIndex(2))
        builder.allowAll(allow)
        let before = PageRelease.stepsTaken.load(ordering: .relaxed)
        let matcher = (consume builder).build()
        #expect(PageRelease.stepsTaken.load(ordering: .relaxed) - before >= 10)
        var wrong: [String] = []
        for index in 0..<150_000 {
            let name = "www.n\(index).s\(index % 97).example.com"
            let result = Array(name.utf8).withUnsafeBytes { matcher.match(text: $0) }
            let entries = matcher.entrySets[Int(result.entrySet.rawValue)].map(\.rawValue)
            let expected: [UInt32] = index % 97 == 5 ? [1, 2] : [1]
            if entries != expected || result.isAllowed != (index % 1000 == 0) { wrong.append(name) }
        }
        #expect(wrong.isEmpty, "\(wrong.count) names answered wrongly, first \(wrong.prefix(3))")
    }
}
