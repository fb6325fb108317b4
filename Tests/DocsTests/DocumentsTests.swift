import Foundation
import Testing

// The repository's documents must stand on their own in a clone: every `SPEC §N` in the code
// resolves to a section of docs/spec.md, comments explain themselves instead of pointing at a
// tracker's numbers, and no link or path leads outside the repository.

/// The repository root, found from this file's own path (Tests/DocsTests/DocumentsTests.swift).
private let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// One line of one file, for messages: `Sources/Helper/HelperMain.swift:66`.
private struct Place: CustomStringConvertible {
    var path: String
    var line: Int
    var text: String
    var description: String { "\(path):\(line): \(text.trimmingCharacters(in: .whitespaces))" }
}

/// Every text file under `paths` (folders or files, relative to the root), as (relative path,
/// contents). Build folders and Git's own are skipped; a file that is not UTF-8 (a fuzz corpus
/// entry, a screenshot) is not text and is skipped too.
private func textFiles(_ paths: [String]) -> [(path: String, text: String)] {
    let fm = FileManager.default
    var out: [(String, String)] = []
    func add(_ url: URL) {
        var relative = Substring(url.standardizedFileURL.path(percentEncoded: false).dropFirst(root.standardizedFileURL.path(percentEncoded: false).count))
        while relative.hasPrefix("/") { relative = relative.dropFirst() }
        guard let data = fm.contents(atPath: url.path(percentEncoded: false)), let text = String(data: data, encoding: .utf8) else { return }
        out.append((String(relative), text))
    }
    for path in paths {
        let url = root.appending(path: path)
        var isFolder: ObjCBool = false
        guard fm.fileExists(atPath: url.path(percentEncoded: false), isDirectory: &isFolder) else { continue }
        guard isFolder.boolValue else { add(url); continue }
        guard let walker = fm.enumerator(at: url, includingPropertiesForKeys: [.isDirectoryKey, .isRegularFileKey]) else { continue }
        for case let file as URL in walker {
            let values = try? file.resourceValues(forKeys: [.isDirectoryKey, .isRegularFileKey])
            if values?.isDirectory == true {
                let name = file.lastPathComponent
                if name.hasPrefix(".build") || name == ".git" || name == ".swiftpm" || name == "fuzz-corpus" { walker.skipDescendants() }
                continue
            }
            if values?.isRegularFile == true { add(file) }
        }
    }
    return out.sorted { $0.0 < $1.0 }
}

/// Each line of each file that `pattern` matches, with the first capture group when it has one.
private func matches(of pattern: String, in files: [(path: String, text: String)], ignoringCase: Bool = false) throws -> [(place: Place, capture: String)] {
    let regex = try NSRegularExpression(pattern: pattern, options: ignoringCase ? [.caseInsensitive] : [])
    var out: [(Place, String)] = []
    for file in files {
        for (index, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            let range = NSRange(line.startIndex..., in: line)
            for match in regex.matches(in: line, range: range) {
                let group = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
                let capture = Range(group, in: line).map { String(line[$0]) } ?? ""
                out.append((Place(path: file.path, line: index + 1, text: line), capture))
            }
        }
    }
    return out
}

@Suite struct DocumentsTests {
    /// The section numbers of docs/spec.md: `## 9b. Network anti-bypass` gives `9b`.
    static func specSections() throws -> Set<String> {
        let spec = try String(contentsOf: root.appending(path: "docs/spec.md"), encoding: .utf8)
        let regex = try NSRegularExpression(pattern: #"^## ([0-9]+[a-z]?)\. "#, options: [.anchorsMatchLines])
        return Set(regex.matches(in: spec, range: NSRange(spec.startIndex..., in: spec)).compactMap { match in
            Range(match.range(at: 1), in: spec).map { String(spec[$0]) }
        })
    }

    @Test func spec_keeps_the_briefs_numbered_sections() throws {
        let expected: Set<String> = ["1", "2", "3", "4", "4a", "5", "5a", "6", "7", "8", "9", "9a", "9b", "9c", "10", "11", "12", "12a", "13"]
        let sections = try Self.specSections()
        #expect(expected.subtracting(sections).isEmpty, "docs/spec.md lacks the sections \(expected.subtracting(sections).sorted()); code cites them as SPEC §N")
    }

    @Test func every_spec_citation_in_the_code_resolves_to_a_section_of_docs_spec_md() throws {
        let sections = try Self.specSections()
        let files = textFiles(["Sources", "Tests", "scripts", "bench", "Package.swift", "Makefile", "README.md", "DEVELOPERS.md", "docs", "etc", "blocklists"])
        let citations = try matches(of: #"SPEC §([0-9]+[a-z]?)"#, in: files)
        let unresolved = citations.filter { !sections.contains($0.capture) }
        for citation in unresolved { print("unresolved SPEC §\(citation.capture): \(citation.place)") }
        #expect(citations.count > 500, "only \(citations.count) citations found; is the root \(root.path) right?")
        let list = unresolved.map { "SPEC §\($0.capture) at \($0.place)" }.joined(separator: "\n")
        #expect(unresolved.isEmpty, "\(unresolved.count) of \(citations.count) SPEC citations have no `## N.` heading in docs/spec.md:\n\(list)")
    }

    @Test func no_comment_or_document_cites_an_issue_number() throws {
        let files = textFiles(["Sources", "Tests", "scripts", "bench", "Package.swift", "Makefile", "README.md", "DEVELOPERS.md", "docs", "etc"])
        let found = try matches(of: #"\bissue [0-9]+"#, in: files, ignoringCase: true)
        for hit in found { print("issue number: \(hit.place)") }
        let list = found.map { "\($0.place)" }.joined(separator: "\n")
        #expect(found.isEmpty, "\(found.count) issue numbers a clone cannot resolve; cite a SPEC § section or say why in words:\n\(list)")
    }

    @Test func every_relative_link_of_the_documents_points_at_a_file_of_the_repository() throws {
        var docs = ["README.md", "DEVELOPERS.md", "blocklists/README.md"]
        let folder = root.appending(path: "docs")
        docs += try FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false)).filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        let links = try matches(of: #"\]\(([^)\s]+)\)"#, in: textFiles(docs))
        #expect(links.count > 20, "only \(links.count) links found")
        var broken: [String] = []
        for link in links {
            let target = link.capture
            if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") || target.hasPrefix("#") { continue }
            let file = String(target.split(separator: "#", maxSplits: 1).first ?? "")
            let base = root.appending(path: link.place.path).deletingLastPathComponent()
            let resolved = base.appending(path: file).standardizedFileURL
            let inside = resolved.path(percentEncoded: false).hasPrefix(root.standardizedFileURL.path(percentEncoded: false))
            if !inside || !FileManager.default.fileExists(atPath: resolved.path(percentEncoded: false)) {
                broken.append("\(link.place.path):\(link.place.line): \(target)" + (inside ? "" : " (outside the repository)"))
            }
        }
        for line in broken { print("broken link: \(line)") }
        #expect(broken.isEmpty, "links to files that are not in the repository:\n\(broken.joined(separator: "\n"))")
    }

    /// `docs/benchmarks.md, "Slow DNS-over-TCP readers"`: a section cited by name must still be in the
    /// page (a heading or a bold lead). Condensing the page once left two citations pointing nowhere.
    @Test func every_named_section_of_docs_benchmarks_md_cited_anywhere_is_in_it() throws {
        let page = try String(contentsOf: root.appending(path: "docs/benchmarks.md"), encoding: .utf8)
        let files = textFiles(["Sources", "Tests", "scripts", "bench", "Package.swift", "Makefile", "README.md", "DEVELOPERS.md", "docs"])
        let citations = try matches(of: #"benchmarks\.md[^"\n]{0,4}"([^"]{3,80})""#, in: files)
        #expect(citations.count > 10, "only \(citations.count) named citations found")
        let missing = citations.filter { !page.contains($0.capture) }.map { "\($0.place.path):\($0.place.line): \"\($0.capture)\"" }
        #expect(missing.isEmpty, "sections of docs/benchmarks.md cited by a name it no longer has:\n\(missing.joined(separator: "\n"))")
    }

    @Test func nothing_in_the_repository_points_at_the_shared_folder_outside_it() throws {
        // Spelled in two parts so this file does not find itself.
        let needles = ["../" + "shared", "/work/" + "shared"]
        let files = textFiles(["."])
        var found: [String] = []
        for needle in needles {
            found += try matches(of: NSRegularExpression.escapedPattern(for: needle), in: files).map { "\($0.place)" }
        }
        #expect(files.count > 300, "only \(files.count) files read; is the root \(root.path) right?")
        #expect(found.isEmpty, "paths outside the repository:\n\(found.joined(separator: "\n"))")
    }
}
