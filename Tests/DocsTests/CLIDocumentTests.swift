import ArgumentParser
import Foundation
import Testing
@testable import scrolloff
@testable import scrolloff_dns

/// docs/cli.md is the reference for both programs' verbs. The verbs are read from the command
/// trees ArgumentParser parses (each command's `subcommands`, recursively), so a verb added to
/// either program fails here, by its name, until the document says what it does.
@Suite("docs/cli.md documents every verb of scrolloff and scrolloff-dns")
struct CLIDocumentTests {
    static let document: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)) ?? ""
    }()

    /// Every command under `command`, as the words typed to reach it: `scrolloff lists add`.
    /// `_commandName` is the name ArgumentParser parses: `configuration.commandName`, or the type's
    /// name in kebab case when the configuration leaves it out (`Status` is `status`).
    static func verbs(of command: any ParsableCommand.Type, path: [String] = []) -> [String] {
        let here = path + [command._commandName]
        let below = command.configuration.subcommands.flatMap { verbs(of: $0, path: here) }
        return (path.isEmpty ? [] : [here.joined(separator: " ")]) + below
    }

    static let allVerbs = verbs(of: ScrollOff.self) + verbs(of: ScrollOffDNS.self)

    /// Whether `document` shows `verb` as typed: in code (after a backtick) or at the start of a
    /// line of a code block, and followed by a space, a backtick or the line's end, so
    /// `scrolloff stop` is not found in `scrolloff stops`.
    static func documents(_ verb: String, in document: String) -> Bool {
        let escaped = NSRegularExpression.escapedPattern(for: verb)
        guard let regex = try? NSRegularExpression(pattern: "(?:`|^)\(escaped)(?:[ `]|$)", options: [.anchorsMatchLines]) else { return false }
        return regex.firstMatch(in: document, range: NSRange(document.startIndex..., in: document)) != nil
    }

    @Test func the_walk_finds_the_verbs_and_sub_verbs_of_both_programs() {
        // An empty walk would pass the test below with nothing checked.
        for verb in ["scrolloff status", "scrolloff lists add", "scrolloff requests approve", "scrolloff-dns start", "scrolloff-dns config reference"] {
            #expect(Self.allVerbs.contains(verb), "the walk did not find \(verb)")
        }
        #expect(Set(Self.allVerbs).count == Self.allVerbs.count)
    }

    @Test func a_verb_counts_as_documented_only_as_typed() {
        #expect(Self.documents("scrolloff stop", in: "Run `scrolloff stop` to end it."))
        #expect(Self.documents("scrolloff stop", in: "```sh\nscrolloff stop instagram\n```"))
        #expect(Self.documents("scrolloff lists", in: "| `scrolloff lists add URL --name N` | … |"))
        #expect(!Self.documents("scrolloff stop", in: "`scrolloff stops`"))
        #expect(!Self.documents("scrolloff stop", in: "Then stop: scrolloff stop."))
        #expect(!Self.documents("scrolloff-dns reset", in: "`scrolloff-dns clock reset`"))
    }

    @Test func every_verb_is_in_docs_cli_md() {
        #expect(!Self.document.isEmpty, "docs/cli.md is missing")
        let missing = Self.allVerbs.filter { !Self.documents($0, in: Self.document) }
        #expect(missing.isEmpty, "docs/cli.md does not document \(missing.map { "`\($0)`" }.joined(separator: ", ")): add each as it is typed, with what it does")
    }
}
