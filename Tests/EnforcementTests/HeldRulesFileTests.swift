import DomainLists
import Enforcement
import Foundation
import Testing

/// The held-names file a refresh writes under a lock (SPEC §3) is a list like any other: every
/// dropped rule — name and subdomains, exact name, subdomains only, allow — reads back the same.
@Suite("Held list names file")
struct HeldRulesFileTests {
    @Test func dropped_rules_of_every_scope_read_back_exactly_and_kept_ones_are_not_held() throws {
        let directory = NSTemporaryDirectory() + "held-rules-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = directory + "/old.list", held = directory + "/earlier.held", new = directory + "/new.list"
        let out = directory + "/out.held"
        try "0.0.0.0 feed.example.com\n||reels.example.com^\n|exact.example.com^\n*.clips.example.com\n@@||ok.example.com^\nkept.example.com\n"
            .write(toFile: old, atomically: true, encoding: .utf8)
        try "||earlier.example.com^\n".write(toFile: held, atomically: true, encoding: .utf8)
        try "kept.example.com\nnew.example.com\n".write(toFile: new, atomically: true, encoding: .utf8)

        let count = try DomainListValidator.dropper()([old, held], new, out)
        #expect(count == 6)
        let readBack = Set(try DomainListValidator.parse(contentsOfFile: out, budget: .none).rules)
        let expected = Set(try DomainListValidator.parse(contentsOfFile: old, budget: .none).rules)
            .union(try DomainListValidator.parse(contentsOfFile: held, budget: .none).rules)
            .subtracting(try DomainListValidator.parse(contentsOfFile: new, budget: .none).rules)
        #expect(readBack == expected)
        #expect(readBack.contains(ListRule(name: try DomainName("exact.example.com"), scope: .exactName)))
        #expect(readBack.contains(ListRule(name: try DomainName("clips.example.com"), scope: .subdomainsOnly)))
        #expect(readBack.contains(ListRule(name: try DomainName("ok.example.com"), action: .allow)))
        #expect(!readBack.contains(ListRule(name: try DomainName("kept.example.com"))))
    }
}
