import ControlAPI
import Foundation
import ScrollOffCore
import Testing

/// The control API's strings are declared once, in Sources/ControlAPI: route paths in
/// `ControlEndpoints`, query keys in `ControlQuery`, refusal rules as `Refusal.Rule.wireName`. A
/// literal copy anywhere else compiles, works, and drifts the day the declaration changes, so this
/// reads every Swift file under Sources/ outside ControlAPI and names each copy by file and line.
@Suite("The contract's strings are spelt only in ControlAPI")
struct ContractLiteralTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every line of code (comments left out) of the Swift files under Sources/ but outside
    /// Sources/ControlAPI, as `path:line` and text.
    static let lines: [(place: String, text: String)] = {
        let sources = root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else { return [] }
        var out: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(root.path.count + 1))
            if relative.hasPrefix("Sources/ControlAPI/") { continue }
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                out.append(("\(relative):\(index + 1)", String(line)))
            }
        }
        return out.sorted { $0.0 < $1.0 }
    }()

    /// The places whose line matches `pattern`.
    static func places(matching pattern: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return lines.filter { line in
            regex.firstMatch(in: line.text, range: NSRange(line.text.startIndex..., in: line.text)) != nil
        }.map { "\($0.place): \($0.text.trimmingCharacters(in: .whitespaces))" }
    }

    @Test func the_scan_reads_the_cli_and_the_server() {
        // A wrong root would find nothing and pass every test below.
        #expect(Self.lines.contains { $0.place.hasPrefix("Sources/scrolloff/Status.swift:") })
        #expect(Self.lines.contains { $0.place.hasPrefix("Sources/ControlServer/EngineRoutes.swift:") })
    }

    @Test func no_route_path_is_spelt_outside_the_route_table() throws {
        let found = try Self.places(matching: #""/v1(/|")"#)
        #expect(found.isEmpty, "route paths belong in ControlEndpoints; use the endpoint: \(found.joined(separator: "; "))")
    }

    @Test func no_query_key_is_spelt_outside_control_query() throws {
        // A parsed query read with a string key, a query built by hand, or a key passed as a word.
        let patterns = [#"query\s*\[\s*""#, #"parameters\s*\[\s*""#, #"query\.(nonEmpty|flag)\(\s*""#, #"URLQueryItem\(\s*name:\s*""#,
                        #""[^"]*[?&](profile|category|archived|period|since|all|entry|after)="#]
        let found = try patterns.flatMap { try Self.places(matching: $0) }
        #expect(found.isEmpty, "query keys belong in ControlQuery (with the endpoint that reads them), path parameters in ControlPath: \(found.joined(separator: "; "))")
        // The last pattern lists the keys as they are today; a new key must be added to it.
        #expect(Set(ControlQuery.keys.map(\.name)) == ["profile", "category", "archived", "period", "since", "all", "entry", "after"])
    }

    @Test func no_refusal_rule_is_spelt_outside_its_enum() throws {
        var found: [String] = []
        for rule in Refusal.Rule.allCases {
            let name = NSRegularExpression.escapedPattern(for: rule.wireName)
            // A one-word name (`cooldown`, `curfew`, `role`) is also a schedule kind, a knob or a
            // state: it counts where the line is about a rule. A snake_case name counts anywhere.
            let pattern = rule.wireName.contains("_") ? "\"\(name)\"" : "(?i)rule.*\"\(name)\"|\"\(name)\".*rule"
            found += try Self.places(matching: pattern)
        }
        #expect(found.isEmpty, "refusal rules cross as Refusal.Rule (wireName, refusalRule): \(found.joined(separator: "; "))")
    }
}
