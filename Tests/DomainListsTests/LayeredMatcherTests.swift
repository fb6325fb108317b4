import TestSupport
import Testing
@testable import DomainLists

/// `LayeredMatcher`: a lists layer and a custom layer answer every name exactly as one matcher
/// built from the rules of both (SPEC §1: the entries of every rule covering the name; allow beats
/// block), so that a custom domain's change can build the custom layer alone.
@Suite struct LayeredMatcherTests {
    /// A name's answer as its entries and allowed bit: set ids differ between two builds.
    struct Answer: Equatable, CustomStringConvertible {
        var entries: [UInt32]
        var allowed: Bool
        var description: String { "\(entries)\(allowed ? " allowed" : "")" }
    }

    static func answer(_ name: String, _ whole: DomainMatcher) -> Answer {
        let result = whole.match(name)
        return Answer(entries: whole.entries(of: result.entrySet).map(\.rawValue), allowed: result.isAllowed)
    }

    static func answer(_ name: String, _ layered: LayeredMatcher) -> Answer {
        let result = layered.match(name)
        return Answer(entries: layered.entries(of: result.entrySet).map(\.rawValue), allowed: result.isAllowed)
    }

    /// The same name in wire form, as the DNS path asks.
    static func wireAnswer(_ name: String, _ layered: LayeredMatcher) -> Answer {
        var wire: [UInt8] = []
        for label in name.split(separator: ".") {
            wire.append(UInt8(label.utf8.count))
            wire.append(contentsOf: label.utf8)
        }
        wire.append(0)
        let result = wire.withUnsafeBytes { layered.match(wire: $0) }
        return Answer(entries: layered.entries(of: result.entrySet).map(\.rawValue), allowed: result.isAllowed)
    }

    /// Every name of up to `depth` labels over a small alphabet: rules drawn from it overlap often
    /// (a custom name equal to a listed one, above it, below it), and the queries include every
    /// rule's name, its parents and its subdomains.
    static func names(depth: Int) -> [String] {
        var level = ["com", "net"], all = level
        for _ in 1..<depth {
            level = level.flatMap { parent in ["a", "b", "c", "d"].map { "\($0).\(parent)" } }
            all += level
        }
        return all
    }

    @Test func a_layered_matcher_answers_every_name_as_one_matcher_of_both_layers_rules() throws {
        let ruleNames = Self.names(depth: 4), queries = Self.names(depth: 6)
        for seed in UInt64(1)...40 {
            var random = SplitMix64(seed: seed)
            func rule(entries: Range<UInt32>) -> (String, EntryIndex) {
                let name = ruleNames.randomElement(using: &random)!
                let prefix = ["", "", "", "=", "*."].randomElement(using: &random)!
                if Int.random(in: 0..<10, using: &random) == 0 { return ("+" + prefix + name, 0) }
                return (prefix + name, EntryIndex(UInt32.random(in: entries, using: &random)))
            }
            // Lists: entries 0..<6, every scope, some allow rules. Custom: entries 6..<12 (as the
            // engine numbers custom domains after the lists), a name and its subdomains, or allowed.
            let listRules = (0..<Int.random(in: 0...120, using: &random)).map { _ in rule(entries: 0..<6) }
            let customRules = (0..<Int.random(in: 1...12, using: &random)).map { _ -> (String, EntryIndex) in
                let name = ruleNames.randomElement(using: &random)!
                if Int.random(in: 0..<5, using: &random) == 0 { return ("+" + name, 0) }
                return (name, EntryIndex(UInt32.random(in: 6..<12, using: &random)))
            }
            let whole = try matcher(listRules + customRules)
            let layered = LayeredMatcher(lists: try matcher(listRules), custom: try matcher(customRules))
            for query in queries {
                let expected = Self.answer(query, whole)
                #expect(Self.answer(query, layered) == expected, "seed \(seed): \(query)")
                #expect(Self.wireAnswer(query, layered) == expected, "seed \(seed): \(query) in wire form")
            }
        }
    }

    @Test func a_name_in_both_layers_names_both_entries_and_allow_in_either_layer_wins() throws {
        let lists = try matcher([("example.com", 1), ("ads.example.com", 2), ("=exact.example.com", 3), ("*.wild.net", 4),
                                 ("+ok.example.com", 0)])
        let custom = try matcher([("example.com", 7), ("deep.ads.example.com", 8), ("wild.net", 9), ("+fine.ads.example.com", 0)])
        let layered = LayeredMatcher(lists: lists, custom: custom)
        let cases: [(String, Answer)] = [
            ("example.com", Answer(entries: [1, 7], allowed: false)),
            ("www.example.com", Answer(entries: [1, 7], allowed: false)),
            ("ads.example.com", Answer(entries: [1, 2, 7], allowed: false)),
            ("x.deep.ads.example.com", Answer(entries: [1, 2, 7, 8], allowed: false)),
            ("exact.example.com", Answer(entries: [1, 3, 7], allowed: false)),
            ("sub.exact.example.com", Answer(entries: [1, 7], allowed: false)),
            ("ok.example.com", Answer(entries: [1, 7], allowed: true)),
            ("fine.ads.example.com", Answer(entries: [1, 2, 7], allowed: true)),
            ("wild.net", Answer(entries: [9], allowed: false)),
            ("a.wild.net", Answer(entries: [4, 9], allowed: false)),
            ("other.net", Answer(entries: [], allowed: false)),
        ]
        for (name, expected) in cases {
            #expect(Self.answer(name, layered) == expected, "\(name)")
        }
    }

    /// A custom name at the top of a large list (all of `com`) makes a pair for every lists answer
    /// under it, found by one pass over the lists' records.
    @Test func a_custom_name_above_every_listed_name_pairs_with_each_of_their_answers() throws {
        var listRules: [(String, EntryIndex)] = []
        for i in 0..<20_000 { listRules.append(("n\(i).s\(i % 50).com", EntryIndex(UInt32(i % 5)))) }
        listRules.append(("s7.com", 5))
        let customRules: [(String, EntryIndex)] = [("com", 9), ("n7.s7.com", 10)]
        let whole = try matcher(listRules + customRules)
        let layered = LayeredMatcher(lists: try matcher(listRules), custom: try matcher(customRules))
        for i in stride(from: 0, to: 20_000, by: 97) + [7] {
            for name in ["n\(i).s\(i % 50).com", "www.n\(i).s\(i % 50).com", "s\(i % 50).com"] {
                #expect(Self.answer(name, layered) == Self.answer(name, whole), "\(name)")
            }
        }
        #expect(Self.answer("unlisted.com", layered) == Answer(entries: [9], allowed: false))
        #expect(Self.answer("x.n7.s7.com", layered) == Answer(entries: [2, 5, 9, 10], allowed: false))
    }

    /// A pair the layers were not put together for (none can be met; this asks for one directly)
    /// answers with every entry of both layers: blocked wherever either layer's entry blocks.
    @Test func a_pair_missing_from_the_table_answers_with_every_entry_never_with_one_layers_alone() throws {
        let lists = try matcher([("example.com", 1), ("ads.example.com", 2), ("other.net", 3)])
        let custom = try matcher([("example.org", 7), ("+fine.example.org", 0)])
        let layered = LayeredMatcher(lists: lists, custom: custom)
        let customSet = custom.match("example.org").entrySet.rawValue
        let listSet = lists.match("ads.example.com").entrySet.rawValue
        // No name is in both "ads.example.com"'s lists set and example.org's custom set.
        let missed = layered.pairID(listSet, customSet)
        #expect(layered.entries(of: EntrySetID(rawValue: missed)).map(\.rawValue) == [1, 2, 3, 7])
        // Pairs that names meet keep their exact sets.
        #expect(Self.answer("www.example.org", layered) == Answer(entries: [7], allowed: false))
        #expect(Self.answer("ads.example.com", layered) == Answer(entries: [1, 2], allowed: false))
    }

    @Test func with_no_custom_rule_the_lists_answer_with_their_own_set_ids() throws {
        let lists = try matcher([("example.com", 1), ("ads.example.com", 2)])
        let layered = LayeredMatcher(lists: lists, custom: DomainMatcher())
        #expect(layered.entrySets == lists.entrySets)
        for name in ["example.com", "x.ads.example.com", "other.org"] {
            #expect(layered.match(name) == lists.match(name), "\(name)")
        }
    }
}
