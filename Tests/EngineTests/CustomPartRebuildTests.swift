import DomainLists
@testable import Enforcement
@testable import Engine
import Foundation
import ScrollOffCore
import Testing

/// A change of the custom domains builds only the custom part of the matcher and reuses the lists
/// part as it is (`MatcherTables.replacingCustom`): `block new.example` with a 1,000,000-name list
/// in force no longer reads and builds the list again. The answers are those of a whole build.
@Suite("Engine: a custom domain builds only the custom part of the matcher")
struct CustomPartRebuildTests {
    /// Every name's decision for `profile` at `now` from `tables` and the rules given, with the
    /// entries that cover it: comparable across two builds, whose set ids differ.
    static func answers(_ tables: MatcherTables, _ rules: [ProfileRules], profile: Int, names: [String], at now: Instant)
        -> [String: String] {
        let snapshot = tables.snapshot(rules, at: now)
        var out: [String: String] = [:]
        for name in names {
            let match = tables.matcher.match(name)
            let entries = tables.matcher.entries(of: match.entrySet).map { tables.entries[Int($0.rawValue)].rawValue }
            let decision = snapshot.decide(profile: profile, set: match.entrySet.rawValue, now: now)
            out[name] = "\(entries) allowed \(match.isAllowed) → blocked \(!match.isAllowed && decision.blocked) "
                + "managed \(decision.managed) ttl \(decision.ttlCap) kind \(decision.kind)"
        }
        return out
    }

    @Test func a_custom_domain_change_with_a_list_in_force_reuses_the_list_matcher_and_answers_as_a_whole_build() async throws {
        let dir = Fixture.temporaryDirectory()
        let names = try ListCopyRebuildTests.writeList(2_000, to: dir + "/bench.list")
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await ListCopyRebuildTests.putInForce(engine, path: dir + "/bench.list")
        _ = try await engine.addProfile("kids", clients: ["10.0.0.0/8"])
        _ = try await engine.block(["bench", "instagram"])
        let listMatcher = engine.box.enforcement.matcher.lists

        // New custom domains: a new name, a listed name, a parent of listed names, a name below a
        // listed one, a name below a catalog service; one more in the second profile only.
        let custom = ["new.example", names[5], "s3.copy-bench.example", "deep." + names[9], "cdn.instagram.com"]
        _ = try await engine.block(custom)
        _ = try await engine.block(["kids-only.example", names[11]], profile: "kids")
        let enforcement = engine.box.enforcement
        #expect(enforcement.matcher.lists === listMatcher, "the list's matcher was built again for a custom domain")
        #expect(enforcement.tables.entries.contains("new.example"))

        var queries = ["unlisted.copy-bench.example", "copy-bench.example", "www.instagram.com", "instagram.com", "example"]
        for name in custom + ["kids-only.example", names[11]] { queries += [name, "www." + name, String(name.drop { $0 != "." }.dropFirst())] }
        for i in stride(from: 0, to: names.count, by: 37) { queries += [names[i], "m." + names[i]] }
        let now = await engine.trustedNow()
        let rules = await engine.profiles.map(\.rules)
        let catalog = await engine.catalog, lists = await engine.lists
        let (whole, unreadable) = MatcherTables.build(catalog: catalog, lists: lists, inputs: enforcement.tables.inputs)
        #expect(unreadable.isEmpty)
        for profile in 0..<2 {
            let layered = Self.answers(enforcement.tables, rules, profile: profile, names: queries, at: now)
            let expected = Self.answers(whole, rules, profile: profile, names: queries, at: now)
            for name in queries { #expect(layered[name] == expected[name], "profile \(profile): \(name)") }
        }
        // And what the DNS side decides from the enforcement published.
        for name in custom { #expect(await engine.decision("www." + name).blocked, "\(name)") }
        #expect(await engine.decision(names[100]).blocked)
        #expect(await engine.decision("kids-only.example").blocked == false, "another profile's custom domain")
        #expect(await engine.decision("kids-only.example", client: "10.1.2.3").blocked)

        // A new copy of the list is a list change: the lists part is built again.
        await ListCopyRebuildTests.putInForce(engine, path: dir + "/bench.list")
        #expect(engine.box.enforcement.matcher.lists !== listMatcher)
        #expect(await engine.decision("www.new.example").blocked)
    }
}
