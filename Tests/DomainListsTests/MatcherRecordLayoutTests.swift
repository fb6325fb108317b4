@testable import DomainLists
import Testing

/// SPEC §9: a node record stores only the answers its node has (none, one for both, self only,
/// or both), each 2 bytes when every entry-set id fits beside the allowed bit, else 4. Each case
/// checks the answers a lookup gives and the record table's exact size for that encoding.
@Suite("Matcher: record layout")
struct MatcherRecordLayoutTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var rules: [(String, UInt32)]
        /// Query, entries, allowed.
        var expected: [(String, [UInt32], Bool)]
        /// Each node's label length and how many answers its record stores.
        var nodes: [(label: Int, answers: Int)]
        var testDescription: String { name }
    }

    static let long63 = String(repeating: "a", count: 63)
    static let other63 = String(repeating: "b", count: 63)
    static let long61 = String(repeating: "c", count: 61)

    static let cases: [Case] = [
        Case(name: "a name and its subdomains: one answer for both",
             rules: [("adsx.example", 1)],
             expected: [("adsx.example", [1], false), ("x.adsx.example", [1], false), ("example", [], false)],
             nodes: [(7, 0), (4, 1)]),
        Case(name: "only a self answer",
             rules: [("=exact.example", 1)],
             expected: [("exact.example", [1], false), ("a.exact.example", [], false)],
             nodes: [(7, 0), (5, 1)]),
        Case(name: "only a below answer (self stored as 0)",
             rules: [("*.wild.example", 1)],
             expected: [("wild.example", [], false), ("a.wild.example", [1], false)],
             nodes: [(7, 0), (4, 2)]),
        Case(name: "self and below differ",
             rules: [("=dual.example", 1), ("*.dual.example", 2)],
             expected: [("dual.example", [1], false), ("a.dual.example", [2], false), ("example", [], false)],
             nodes: [(7, 0), (4, 2)]),
        Case(name: "an ancestor's rule folded into both differing answers",
             rules: [("example", 3), ("=dual.example", 1), ("*.dual.example", 2)],
             expected: [("example", [3], false), ("dual.example", [1, 3], false), ("a.dual.example", [2, 3], false),
                        ("other.example", [3], false)],
             nodes: [(7, 1), (4, 2)]),
        Case(name: "allowed, one answer for both",
             rules: [("+ok.example", 0)],
             expected: [("ok.example", [], true), ("x.ok.example", [], true), ("example", [], false)],
             nodes: [(7, 0), (2, 1)]),
        Case(name: "allowed, self only",
             rules: [("+=ok.example", 0)],
             expected: [("ok.example", [], true), ("x.ok.example", [], false)],
             nodes: [(7, 0), (2, 1)]),
        Case(name: "allowed below only, self stored as 0",
             rules: [("+*.open.example", 0)],
             expected: [("open.example", [], false), ("x.open.example", [], true)],
             nodes: [(7, 0), (4, 2)]),
        Case(name: "blocked, the name itself allowed: both answers, only self allowed",
             rules: [("ads.example", 1), ("+=ads.example", 0)],
             expected: [("ads.example", [1], true), ("x.ads.example", [1], false)],
             nodes: [(7, 0), (3, 2)]),
        Case(name: "blocked, its subdomains allowed: both answers, only below allowed",
             rules: [("ads.example", 1), ("+*.ads.example", 0)],
             expected: [("ads.example", [1], false), ("x.ads.example", [1], true)],
             nodes: [(7, 0), (3, 2)]),
        Case(name: "63-byte labels in every form, and the last record's answer read up to the spare bytes",
             rules: [("\(long63).example", 1), ("=\(other63).example", 2), ("*.\(long63).\(other63).example", 3),
                     ("\(long61).\(long63).example", 4)],
             expected: [("\(long63).example", [1], false), ("x.\(long63).example", [1], false),
                        ("\(other63).example", [2], false), ("x.\(other63).example", [], false),
                        ("\(long63).\(other63).example", [], false), ("x.\(long63).\(other63).example", [3], false),
                        ("\(long61).\(long63).example", [1, 4], false), ("X.\(long61).\(long63).example.", [1, 4], false)],
             nodes: [(7, 0), (63, 1), (63, 1), (63, 2), (61, 1)]),
    ]

    @Test(arguments: cases, [false, true])
    func answers_and_record_bytes_follow_the_encoding(_ testCase: Case, wideAnswers: Bool) throws {
        let matcher = try matcher(testCase.rules.map { ($0.0, EntryIndex($0.1)) }, wideAnswers: wideAnswers)
        let width = wideAnswers ? 4 : 2
        #expect(matcher.answerWidth == width)
        for (query, entries, allowed) in testCase.expected {
            let result = matcher.match(query)
            #expect(matcher.entries(of: result.entrySet) == entries.map { EntryIndex($0) }, "\(query)")
            #expect(result.isAllowed == allowed, "\(query)")
            #expect(wire(query).withUnsafeBytes { matcher.match(wire: $0) } == result, "\(query)")
        }
        // Parent, length-and-form byte, label, answers, back to back; then the four spare bytes.
        let records = testCase.nodes.reduce(0) { $0 + 4 + 1 + $1.label + $1.answers * width }
        #expect(matcher.recordBytes == records + 4)
        #expect(matcher.nodeCount == testCase.nodes.count)
    }

    /// Entry-set ids 0…32,767 fit 2 bytes beside the allowed bit (bit 15); one set more needs 4.
    /// Every name gets its own set, so `names` distinct names publish `names + 1` sets (with the
    /// empty one), and the last name's set has the highest id. That name is also allowed, so its
    /// answer sets the top bit of the width next to the largest id.
    @Test(arguments: [(32_767, 2), (32_768, 4)])
    func answer_width_switches_past_32768_entry_sets(names: Int, width: Int) {
        var builder = MatcherBuilder()
        for index in 0..<names {
            var text = "n\(index).w.example"
            text.withUTF8 { builder.add(normalizedName: $0, scope: .nameAndSubdomains, entry: EntryIndex(UInt32(index))) }
        }
        let last = "n\(names - 1).w.example"
        var lastText = last
        lastText.withUTF8 { builder.allow(normalizedName: $0, scope: .exactName) }
        let matcher = builder.build()

        #expect(matcher.entrySets.count == names + 1)
        #expect(matcher.answerWidth == width)
        let lastResult = matcher.match(last)
        #expect(lastResult.entrySet.rawValue == UInt32(names))
        #expect(lastResult.isAllowed)
        #expect(matcher.entries(of: lastResult.entrySet) == [EntryIndex(UInt32(names - 1))])
        #expect(matcher.match("x." + last) == MatchResult(entrySet: lastResult.entrySet, isAllowed: false))
        var wrong = 0
        for index in 0..<(names - 1) {
            let result = matcher.match("www.n\(index).w.example")
            if result.isAllowed || matcher.entries(of: result.entrySet) != [EntryIndex(UInt32(index))] { wrong += 1 }
        }
        #expect(wrong == 0)
        #expect(matcher.match("w.example") == .noMatch)
    }

    /// A record's length field holds at most 63, the longest label a DNS name may have (RFC 1035
    /// §2.3.4): a longer one given to the builder directly is not stored, nor are its parents.
    @Test func a_label_over_63_bytes_is_not_stored() {
        var builder = MatcherBuilder()
        var text = String(repeating: "x", count: 64) + ".example"
        text.withUTF8 { builder.add(normalizedName: $0, scope: .nameAndSubdomains, entry: 1) }
        let matcher = builder.build()
        #expect(matcher.ruleCount == 0)
        #expect(matcher.nodeCount == 0)
        #expect(matcher.match(text) == .noMatch)
        #expect(matcher.match("example") == .noMatch)
    }
}
