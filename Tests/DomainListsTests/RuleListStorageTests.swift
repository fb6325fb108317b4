import Testing
@testable import DomainLists

/// `RuleList` keeps value semantics over its shared storage (`PackedRules`), which hands its pages
/// back in steps when the last copy goes: a copy must never lose a name to another copy's change
/// or to its freeing (that would be a fail-open, SPEC §9).
@Suite struct RuleListStorageTests {
    /// Enough names that the storage is several 256 KiB steps.
    static func large(_ count: Int = 60_000, prefix: String = "n") -> RuleList {
        var rules = RuleList()
        for index in 0..<count { rules.append(ListRule(name: DomainName(normalizedText: "\(prefix)\(index).example.com"))) }
        return rules
    }

    static func expectNames(_ rules: RuleList, count: Int, prefix: String = "n") {
        #expect(rules.count == count)
        var wrong = 0
        for index in 0..<count where rules[index].name.text != "\(prefix)\(index).example.com" { wrong += 1 }
        #expect(wrong == 0)
    }

    @Test func a_copy_keeps_its_names_after_the_original_is_changed_and_dropped() {
        var original: RuleList? = Self.large()
        #expect(original!.storageBytes >= PageRelease.step)
        let copy = original!
        original!.append(ListRule(name: DomainName(normalizedText: "extra.example.com")))
        #expect(original!.count == copy.count + 1)
        original = nil
        Self.expectNames(copy, count: 60_000)
    }

    @Test func the_original_keeps_its_names_after_a_copy_is_changed_and_dropped() {
        let original = Self.large()
        var copy: RuleList? = original
        copy!.reserveCapacity(nameBytes: 4 << 20, rules: 200_000)
        #expect(Array("Added.example.org".utf8).withUnsafeBufferPointer { copy!.appendIfSimpleName($0) })
        #expect(copy!.count == original.count + 1)
        #expect(copy!.last?.name.text == "added.example.org")
        copy = nil
        Self.expectNames(original, count: 60_000)
    }

    @Test func appending_a_list_to_itself_doubles_it() {
        var rules = Self.large(1_000)
        rules.append(contentsOf: rules)
        #expect(rules.count == 2_000)
        #expect(rules[1_000] == rules[0])
        #expect(rules[1_999].name.text == "n999.example.com")
    }

    @Test func lists_with_the_same_rules_are_equal_however_they_were_made() throws {
        let parsed = try ListParser.parse("a.example\n||b.example^\n|c.example^\n").rules
        let built = RuleList([
            ListRule(name: try DomainName("a.example")),
            ListRule(name: try DomainName("b.example")),
            ListRule(name: try DomainName("c.example"), scope: .exactName),
        ])
        #expect(parsed == built)
        var other = built
        #expect(other == built)
        other.append(ListRule(name: try DomainName("d.example")))
        #expect(other != built)
        #expect(RuleList() == RuleList([]))
        let differentScope = RuleList([ListRule(name: try DomainName("a.example"), scope: .exactName)])
        #expect(differentScope != RuleList([ListRule(name: try DomainName("a.example"))]))
    }

    @Test func a_failed_simple_append_leaves_the_list_and_its_copies_as_they_were() {
        var rules = Self.large(10)
        let copy = rules
        let bad = Array("Bad..name".utf8)
        #expect(bad.withUnsafeBufferPointer { rules.appendIfSimpleName($0) } == false)
        #expect(rules == copy)
        #expect(Array("Good.Example".utf8).withUnsafeBufferPointer { rules.appendIfSimpleName($0) })
        #expect(rules.last?.name.text == "good.example")
        #expect(copy.count == 10)
    }
}
