import DomainLists
@testable import Enforcement
@testable import Engine
import Foundation
import ScrollOffCore
import Testing

/// A list whose name is a catalog service's (`lists add` refuses one, but a newer catalog may
/// bring the word, or another helper's older catalog let the list in): a rule naming the word
/// holds the service's names and the list's, never the service's alone.
@Suite("Engine: a list named like a catalog service")
struct ListNamedLikeServiceTests {
    @Test func a_block_of_the_word_blocks_the_services_names_and_the_lists_and_hosts_mode_writes_both() async throws {
        let dir = Fixture.temporaryDirectory()
        let names = try ListCopyRebuildTests.writeList(300, to: dir + "/instagram.list")
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        let parsed = HelperEngine.parseLists(files: ["instagram": dir + "/instagram.list"], held: [:], budget: .default)
        await engine.setLists(parsed.lists, names: ["instagram"], copies: parsed.copies)
        _ = try await engine.block(["instagram"])

        #expect(await engine.decision("www.instagram.com").blocked)
        for name in names.prefix(50) { #expect(await engine.decision(name).blocked, "\(name): the list's name answered open") }

        let tables = engine.box.enforcement.tables
        #expect(tables.entries.filter { $0 == "instagram" }.count == 1, "one entry of that id, not two")
        let index = try #require(tables.entries.firstIndex(of: "instagram"))
        let written = Set(try tables.entryRules[index].load().map(\.name.text))
        #expect(written.contains("instagram.com") && written.contains(names[7]), "hosts mode writes the service's and the list's names")
    }
}
