import ControlAPI
import Foundation
import Testing

/// `ControlEndpoints.endpoints`, `ControlQuery.keys` and `ControlPath.keys` are written by hand. An
/// endpoint left out of its list still compiles and works, but the tests that go over the list (the
/// document's rows, every decoder's bounds, the fuzz target, the helper serving each endpoint) then
/// skip it without a word. Swift cannot list a type's static properties, so this reads the
/// declarations in Sources/ControlAPI and checks that each one is in its list.
@Suite("Every endpoint and key declared in ControlAPI is in its list")
struct DeclarationListTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One `static let` found in the sources: its name, the first string it is made from (an
    /// endpoint's template, a key's name), an endpoint's method, and where it is.
    struct Declaration: CustomStringConvertible {
        var name: String
        var method: String?
        var value: String?
        var place: String
        var description: String { "\(name) (\(place))" }
    }

    /// The Swift files of Sources/ControlAPI as (relative path, text), comment lines blanked so a
    /// commented-out declaration is not read as one (line numbers stay).
    static let sources: [(path: String, text: String)] = {
        let folder = root.appendingPathComponent("Sources/ControlAPI")
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        var out: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            let code = text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? "" : String($0) }
                .joined(separator: "\n")
            out.append((String(url.path.dropFirst(root.path.count + 1)), code))
        }
        return out.sorted { $0.0 < $1.0 }
    }()

    /// Every `static let NAME = TYPE<…>(…)` or `static let NAME: TYPE<…> = .init(…)` in `text`,
    /// with the arguments it starts with: `(.get, "/v1/x"` for an endpoint, `("x"` for a key. A
    /// declaration whose arguments cannot be read is still returned (without them), so it is
    /// reported rather than skipped.
    static func declarations(of type: String, in text: String, path: String) throws -> [Declaration] {
        let start = try NSRegularExpression(pattern:
            #"static\s+let\s+(\w+)\s*(?::\s*\#(type)\b[^=]*=\s*\.init|=\s*\#(type)\b(?:\s*<[^()]*>)?)\s*\("#)
        let arguments = try NSRegularExpression(pattern: #"\G\s*(?:\.(\w+)\s*,\s*)?"([^"]*)""#)
        let whole = NSRange(text.startIndex..., in: text)
        return start.matches(in: text, range: whole).compactMap { match in
            guard let nameRange = Range(match.range(at: 1), in: text), let matchRange = Range(match.range, in: text) else { return nil }
            let line = text[..<matchRange.lowerBound].count { $0 == "\n" } + 1
            var found = Declaration(name: String(text[nameRange]), place: "\(path):\(line)")
            let rest = NSRange(location: NSMaxRange(match.range), length: whole.length - NSMaxRange(match.range))
            if let args = arguments.firstMatch(in: text, options: [.anchored], range: rest) {
                found.method = Range(args.range(at: 1), in: text).map { String(text[$0]) }
                found.value = Range(args.range(at: 2), in: text).map { String(text[$0]) }
            }
            return found
        }
    }

    static func declared(_ type: String) throws -> [Declaration] {
        try sources.flatMap { try declarations(of: type, in: $0.text, path: $0.path) }
    }

    @Test func the_scan_reads_the_forms_a_declaration_is_written_in() throws {
        let sample = """
            public static let now = ControlEndpoint<NoBody, NowReport>(.get, "/v1/now")
            static let later: ControlEndpoint<Later<Int>, DoneResponse> = .init(
                .post,
                "/v1/later/{id}", query: [ControlQuery.all])
            public static let soon = ControlEndpoint<NoBody, DoneResponse>(method, path)
            static let other = SomethingElse(.get, "/v1/not-an-endpoint")
            """
        let found = try Self.declarations(of: "ControlEndpoint", in: sample, path: "sample")
        #expect(found.map(\.name) == ["now", "later", "soon"])
        #expect(found.map(\.method) == ["get", "post", nil])
        #expect(found.map(\.value) == ["/v1/now", "/v1/later/{id}", nil])
        #expect(found.map(\.place) == ["sample:1", "sample:2", "sample:5"])
        // A wrong root would find nothing and pass every test below.
        #expect(Self.sources.contains { $0.path == "Sources/ControlAPI/ControlEndpoints.swift" })
    }

    @Test func every_endpoint_declared_in_control_api_is_in_control_endpoints_endpoints() throws {
        let declared = try Self.declared("ControlEndpoint")
        let unread = declared.filter { $0.method == nil || $0.value == nil }
        #expect(unread.isEmpty, "cannot read the method and path of \(unread); declare it as `static let x = ControlEndpoint<Body, Answer>(.get, \"/v1/x\")`")
        let listed = Set(ControlEndpoints.all.map { "\($0.method.rawValue.lowercased()) \($0.template)" })
        let missing = declared.filter { d in d.method.map { !listed.contains("\($0.lowercased()) \(d.value ?? "")") } ?? false }
        #expect(missing.isEmpty, "add \(missing.map(\.name).joined(separator: ", ")) to ControlEndpoints.endpoints: \(missing)")
        // Also the other way: an entry the scan did not find is a declaration it cannot read.
        #expect(declared.count == ControlEndpoints.endpoints.count,
                "the sources declare \(declared.count) endpoints and ControlEndpoints.endpoints holds \(ControlEndpoints.endpoints.count): one listed twice, or declared in a form this test does not read")
    }

    @Test func every_query_key_declared_in_control_api_is_in_control_query_keys() throws {
        let declared = try Self.declared("ControlQueryKey")
        let listed = Set(ControlQuery.keys.map(\.name))
        let missing = declared.filter { !listed.contains($0.value ?? "") }
        #expect(missing.isEmpty, "add \(missing.map(\.name).joined(separator: ", ")) to ControlQuery.keys: \(missing)")
        #expect(declared.count == ControlQuery.keys.count, "the sources declare \(declared.count) query keys and ControlQuery.keys holds \(ControlQuery.keys.count)")
    }

    @Test func every_path_key_declared_in_control_api_is_in_control_path_keys() throws {
        let declared = try Self.declared("ControlPathKey")
        let listed = Set(ControlPath.keys.map(\.name))
        let missing = declared.filter { !listed.contains($0.value ?? "") }
        #expect(missing.isEmpty, "add \(missing.map(\.name).joined(separator: ", ")) to ControlPath.keys: \(missing)")
        #expect(declared.count == ControlPath.keys.count, "the sources declare \(declared.count) path keys and ControlPath.keys holds \(ControlPath.keys.count)")
    }
}
