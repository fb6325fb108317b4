@testable import DomainLists

/// Paths found from this file, so tests run from any working directory and CI needs only the repo.
enum Paths {
    /// `Tests/DomainListsTests`.
    static let testsFolder: String = {
        let parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        return parts.dropLast().joined(separator: "/")
    }()

    static let fixtures = testsFolder + "/Fixtures"

    /// The repository's `blocklists/` folder.
    static let repositoryBlocklists: String = {
        let parts = testsFolder.split(separator: "/", omittingEmptySubsequences: false)
        return parts.dropLast(2).joined(separator: "/") + "/blocklists"
    }()
}

/// Reads a whole file as bytes with the same reader the catalog uses.
func readFixture(_ relativePath: String) throws -> [UInt8] {
    try Catalog.readFile(Paths.fixtures + "/" + relativePath)
}

/// The lines of a file, split at LF bytes with any CR dropped (Swift treats CRLF as one
/// `Character`, so text splitting would not see it), without the empty piece after a final LF.
func physicalLines(_ bytes: [UInt8]) -> [String] {
    var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        .map { String(decoding: $0.last == 0x0D ? $0.dropLast() : $0, as: UTF8.self) }
    if bytes.last == UInt8(ascii: "\n") { lines.removeLast() }
    return lines
}

/// The `expect-KEY: value` lines a fixture states about itself (see Fixtures/make-lists.py).
func expectations(_ bytes: [UInt8], _ key: String) -> [String] {
    physicalLines(bytes).compactMap { line -> String? in
        guard let range = line.range(of: "expect-\(key): ") else { return nil }
        return String(line[range.upperBound...]).trimmingCharacters()
    }
}

/// 1-based numbers of the lines containing `word`.
func lineNumbers(containing word: String, in bytes: [UInt8]) -> [Int] {
    physicalLines(bytes).enumerated().filter { $0.element.contains(word) }.map { $0.offset + 1 }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\r" }.reversed())
    }
}

/// The matcher's semantics written the slow, obvious way, to check the fast one against.
struct ReferenceMatcher {
    var blocks: [(name: String, scope: MatchScope, entry: EntryIndex)] = []
    var allows: [(name: String, scope: MatchScope)] = []

    static func covers(_ rule: String, _ scope: MatchScope, _ query: String) -> Bool {
        let isSelf = query == rule
        let isBelow = query.hasSuffix("." + rule)
        switch scope {
        case .nameAndSubdomains: return isSelf || isBelow
        case .exactName: return isSelf
        case .subdomainsOnly: return isBelow
        }
    }

    func match(_ query: String) -> (entries: [EntryIndex], allowed: Bool) {
        var query = query.lowercased()
        if query.hasSuffix(".") { query.removeLast() }
        let entries = Set(blocks.filter { Self.covers($0.name, $0.scope, query) }.map(\.entry)).sorted()
        let allowed = allows.contains { Self.covers($0.name, $0.scope, query) }
        return (entries, allowed)
    }
}

/// DNS wire format of a dotted name (RFC 1035 §3.1).
func wire(_ name: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for label in name.split(separator: ".") {
        bytes.append(UInt8(label.utf8.count))
        bytes.append(contentsOf: label.utf8)
    }
    bytes.append(0)
    return bytes
}
