import ControlAPI
import Foundation
import ScrollOffCore
import Testing

/// docs/control-api.md is the API's reference for scripts: it must name every endpoint the route
/// table declares and every rule a refusal can carry, so a new one cannot land undocumented.
@Suite("docs/control-api.md lists the whole contract")
struct ControlAPIDocumentTests {
    static let document: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/control-api.md"), encoding: .utf8)) ?? ""
    }()

    @Test func every_endpoint_of_the_route_table_has_a_row() {
        #expect(!Self.document.isEmpty, "docs/control-api.md is missing")
        let missing = ControlEndpoints.all.map { "`\($0.method.rawValue) \($0.template)`" }.filter { !Self.document.contains($0) }
        #expect(missing.isEmpty, "docs/control-api.md lacks \(missing)")
    }

    @Test func every_query_key_an_endpoint_reads_is_named_in_its_row() {
        let rows = Self.document.split(separator: "\n")
        var missing: [String] = []
        for endpoint in ControlEndpoints.endpoints {
            let row = rows.first { $0.hasPrefix("| `\(endpoint.method.rawValue) \(endpoint.template)` |") } ?? ""
            missing += endpoint.query.filter { !row.contains("`\($0.name)") }.map { "\(endpoint.method.rawValue) \(endpoint.template) ?\($0.name)" }
        }
        #expect(missing.isEmpty, "docs/control-api.md's rows lack the query keys \(missing)")
        #expect(Self.document.contains("`?profile=NAME`"), "docs/control-api.md does not say every endpoint reads ?profile=")
    }

    @Test func every_refusal_rule_is_named_as_the_wire_spells_it() {
        let missing = Refusal.Rule.allCases.map { "`\($0.wireName)`" }.filter { !Self.document.contains($0) }
        #expect(missing.isEmpty, "docs/control-api.md lacks the rules \(missing)")
    }
}
