import DomainLists
import Enforcement
import Engine
import Foundation
import Helper
import ScrollOffCore
import Testing

/// The engine keeps a fetched list as its stored copy, not as a second packed copy of its rules
/// beside the matcher (SPEC §9), and reads the copy again when a rebuild or hosts mode needs it.
@Suite("Engine: lists kept as their stored copies")
struct ListCopyRebuildTests {
    /// Writes a list of `count` names (and returns them) as a stored copy would lie on disk.
    static func writeList(_ count: Int, to path: String) throws -> [String] {
        let names = (0..<count).map { "feed\($0).s\($0 % 97).copy-bench.example" }
        try (names.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return names
    }

    static func putInForce(_ engine: HelperEngine, path: String, held: String? = nil) async {
        let parsed = HelperEngine.parseLists(files: ["bench": path], held: held.map { ["bench": $0] } ?? [:], budget: .default)
        await engine.setLists(parsed.lists, names: ["bench"], copies: parsed.copies)
    }

    @Test func a_rebuild_after_a_custom_domain_change_still_blocks_every_list_name() async throws {
        let dir = Fixture.temporaryDirectory()
        let names = try Self.writeList(2_000, to: dir + "/bench.list")
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await Self.putInForce(engine, path: dir + "/bench.list")
        _ = try await engine.block(["bench"])
        let before = ObjectIdentifier(engine.box.enforcement.matcher)
        // A new custom domain changes the entries, so the matcher's custom part is built again;
        // its lists part, with the list's names, is kept as it was (no second copy in memory).
        _ = try await engine.block(["news.example.com"])
        let enforcement = engine.box.enforcement
        #expect(ObjectIdentifier(enforcement.matcher) != before, "the custom domain rebuilt the matcher")
        for name in names {
            #expect(enforcement.matcher.match(name).isBlocked, "\(name)")
            #expect(enforcement.matcher.match("www." + name).isBlocked, "www.\(name)")
        }
        #expect(await engine.decision(names[1_234]).blocked)
        #expect(await engine.decision("news.example.com").blocked)
        #expect(await engine.decision("unlisted.copy-bench.example").blocked == false)
    }

    @Test func the_engine_keeps_a_fetched_list_as_its_copy_not_its_rules() async throws {
        let dir = Fixture.temporaryDirectory()
        _ = try Self.writeList(10, to: dir + "/bench.list")
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await Self.putInForce(engine, path: dir + "/bench.list")
        let tables = engine.box.enforcement.tables
        let index = try #require(tables.entries.firstIndex(of: "bench"))
        guard case .copy(let copy) = tables.entryRules[index] else {
            Issue.record("the list is kept as rules in memory: \(tables.entryRules[index])")
            return
        }
        #expect(copy.path == dir + "/bench.list")
        // Catalog services stay in memory (their storage is the catalog's).
        guard case .rules = tables.entryRules[0] else {
            Issue.record("a catalog service is read from disk")
            return
        }
    }

    @Test func held_names_stay_in_force_through_a_rebuild() async throws {
        let dir = Fixture.temporaryDirectory()
        let names = try Self.writeList(20, to: dir + "/bench.list")
        try "||dropped.copy-bench.example^\n".write(toFile: dir + "/bench.held", atomically: true, encoding: .utf8)
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await Self.putInForce(engine, path: dir + "/bench.list", held: dir + "/bench.held")
        _ = try await engine.block(["bench"])
        // A build of the lists again (another list added) reads the kept list from its files.
        await engine.setLists(["other": try OffActorListBuildTests.rules("other.example\n")], names: ["bench", "other"], keeping: ["bench"])
        #expect(engine.box.enforcement.tables.entries.contains("other"))
        #expect(await engine.decision("m.dropped.copy-bench.example").blocked, "a held name survives the rebuild")
        #expect(await engine.decision(names[7]).blocked)
    }

    @Test func hosts_mode_writes_the_names_of_a_list_kept_as_its_copy() async throws {
        let dir = Fixture.temporaryDirectory()
        let names = try Self.writeList(50, to: dir + "/bench.list")
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await Self.putInForce(engine, path: dir + "/bench.list")
        _ = try await engine.block(["bench"])
        let written = Set(engine.box.enforcement.hostsNames(profile: 0, at: Fixture.noon))
        #expect(written.isSuperset(of: names))
    }

    /// Fail closed: a list in force whose copy no longer reads (gone or changed behind the store's
    /// back) keeps its names, because the lists part in force stays; a custom domain builds only
    /// the custom part, so it is in force at once, without reading the copy.
    @Test func a_copy_that_no_longer_reads_at_a_rebuild_keeps_the_matcher_in_force_until_a_good_copy_arrives() async throws {
        let dir = Fixture.temporaryDirectory()
        let names = try Self.writeList(20, to: dir + "/bench.list")
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        await Self.putInForce(engine, path: dir + "/bench.list")
        _ = try await engine.block(["bench", "instagram"])
        #expect(await engine.decision(names[3]).blocked)
        try FileManager.default.removeItem(atPath: dir + "/bench.list")
        _ = try await engine.block(["news.example.com"])
        #expect(await engine.decision(names[3]).blocked, "the list's names opened when its copy could not be read")
        #expect(await engine.decision("www.instagram.com").blocked)
        #expect(await engine.decision("news.example.com").blocked, "the custom domain waited for the list's copy")
        // A good copy again: the lists part is built again, the custom domain stays.
        _ = try Self.writeList(20, to: dir + "/bench.list")
        await Self.putInForce(engine, path: dir + "/bench.list")
        #expect(await engine.decision(names[3]).blocked)
        #expect(await engine.decision("news.example.com").blocked)
    }
}

/// The validator's parse of an accepted copy is handed to the code that puts it in force, so a
/// list is parsed once per download (SPEC §9).
@Suite("Lists: one parse per downloaded copy")
struct ParsedCopiesTests {
    @Test func put_in_force_takes_the_validators_rules_and_forgets_them() throws {
        let dir = Fixture.temporaryDirectory()
        let path = dir + "/bench.list"
        try "one.example\n||two.example^\n".write(toFile: path, atomically: true, encoding: .utf8)
        let copies = ParsedCopies()
        let summary = try DomainListValidator.make(budget: .default, keepingIn: copies)(path)
        #expect(summary.entryCount == 2)
        #expect(copies.waiting == 1)
        let parsed = HelperEngine.parseLists(files: ["bench": path], budget: .default, reusing: copies)
        #expect(parsed.lists["bench"] == (try DomainListValidator.parse(contentsOfFile: path, budget: .default)).rules)
        #expect(copies.waiting == 0, "taken, not kept beside the matcher")
    }

    @Test func kept_rules_survive_the_rename_into_place() throws {
        let dir = Fixture.temporaryDirectory()
        let temporary = dir + "/.bench.tmp", path = dir + "/bench.list"
        try "one.example\n".write(toFile: temporary, atomically: false, encoding: .utf8)
        let copies = ParsedCopies()
        _ = try DomainListValidator.make(budget: .default, keepingIn: copies)(temporary)
        #expect(rename(temporary, path) == 0)
        #expect(copies.peek(path)?.count == 1)
        #expect(copies.take(path)?.count == 1)
        #expect(copies.take(path) == nil)
    }

    @Test func a_file_rewritten_after_validation_is_parsed_again() throws {
        let dir = Fixture.temporaryDirectory()
        let path = dir + "/bench.list"
        try "one.example\n".write(toFile: path, atomically: false, encoding: .utf8)
        let copies = ParsedCopies()
        _ = try DomainListValidator.make(budget: .default, keepingIn: copies)(path)
        // A different size, so the identity differs whatever the clock's resolution.
        try "one.example\nthree.example\n".write(toFile: path, atomically: false, encoding: .utf8)
        let parsed = HelperEngine.parseLists(files: ["bench": path], budget: .default, reusing: copies)
        #expect(parsed.lists["bench"]?.count == 2, "the file's rules, not the kept ones")
    }

    @Test func at_most_capacity_copies_wait() throws {
        let dir = Fixture.temporaryDirectory()
        let copies = ParsedCopies(capacity: 2)
        let validate = DomainListValidator.make(budget: .default, keepingIn: copies)
        for i in 0..<4 {
            try "n\(i).example\n".write(toFile: dir + "/\(i).list", atomically: false, encoding: .utf8)
            _ = try validate(dir + "/\(i).list")
        }
        #expect(copies.waiting == 2)
        #expect(copies.peek(dir + "/0.list") == nil, "the oldest went first")
        #expect(copies.peek(dir + "/3.list")?.count == 1)
    }

    @Test func a_rejected_copy_is_not_kept() throws {
        let dir = Fixture.temporaryDirectory()
        let path = dir + "/bad.list"
        try "<html><body>Not found</body></html>\n".write(toFile: path, atomically: false, encoding: .utf8)
        let copies = ParsedCopies()
        #expect(throws: (any Error).self) { try DomainListValidator.make(budget: .default, keepingIn: copies)(path) }
        #expect(copies.waiting == 0)
    }
}
