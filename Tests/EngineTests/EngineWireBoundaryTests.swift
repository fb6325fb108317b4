import Foundation
import Testing

/// The engine answers in domain values and the control server makes `ControlAPI`'s wire types
/// from them at the edge (docs/architecture.md, Engine). The credit and household features do
/// so already; their files do not import `ControlAPI`, so a wire type cannot slip back into
/// their answers unnoticed.
@Suite("Engine: answers in domain values, wire types only where a reason is named")
struct EngineWireBoundaryTests {
    /// The repository root, found from this file's own path (Tests/EngineTests/…).
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let domainOnly = [
        "Sources/Engine/HelperEngine+Credit.swift", "Sources/Engine/HelperEngine+Household.swift",
        "Sources/Engine/Wallet", "Sources/Engine/Plans", "Sources/Engine/Household",
    ]

    /// The Swift files under `paths`, relative to the root.
    static func swiftFiles(_ paths: [String]) -> [String] {
        var out: [String] = []
        for path in paths {
            let url = root.appending(path: path)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { continue }
            if !isFolder.boolValue { out.append(path); continue }
            for case let file as URL in FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) ?? .init()
            where file.pathExtension == "swift" {
                out.append(path + "/" + file.path.dropFirst(url.path.count + 1))
            }
        }
        return out.sorted()
    }

    @Test func credit_and_household_files_of_the_engine_do_not_import_ControlAPI() throws {
        let files = Self.swiftFiles(Self.domainOnly)
        // Both HelperEngine files and at least one file of each folder: the check cannot pass on nothing.
        #expect(files.count >= 5, "found only \(files)")
        var found: [String] = []
        for file in files {
            let text = try String(contentsOf: Self.root.appending(path: file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let words = line.split(separator: " ").map(String.init)
                if let i = words.firstIndex(of: "import"), words.dropFirst(i + 1).first == "ControlAPI" {
                    found.append("\(file):\(n + 1): \(line)")
                }
            }
        }
        #expect(found.isEmpty, "wire types belong at the edge (Sources/ControlServer/WireAnswers+Credit.swift):\n\(found.joined(separator: "\n"))")
    }

    /// The engine files that still name a wire type, each for a reason; every other file of the
    /// engine answers in domain values and must not import `ControlAPI`.
    static let stillWire: [String: String] = [
        "Sources/Engine/HelperEngine+Reports.swift": "stats and the digest answer StatsReport and DigestReport",
        "Sources/Engine/Insights/InsightChecks.swift": "the weekly digest is stored as StatsReport's JSON",
        "Sources/Engine/Insights/DigestHook.swift": "the digest hook is handed StatsReport's JSON",
        "Sources/Engine/HelperEngine+Rules.swift": "addSchedule takes the wire's ScheduleRequest, a plain value",
        "Sources/Engine/ControlAuthorizer.swift": "who may call an endpoint is decided on the contract's caller identity",
    ]

    @Test func no_other_file_of_the_engine_imports_ControlAPI() throws {
        let files = Self.swiftFiles(["Sources/Engine"])
        #expect(files.count >= 25, "found only \(files.count) files")
        var found: [String] = []
        for file in files where Self.stillWire[file] == nil {
            let text = try String(contentsOf: Self.root.appending(path: file), encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.split(separator: " ").map(String.init) == ["import", "ControlAPI"] }) {
                found.append(file)
            }
        }
        #expect(found.isEmpty, "wire types belong at the edge (Sources/ControlServer/WireAnswers+*.swift):\n\(found.joined(separator: "\n"))")
    }
}
