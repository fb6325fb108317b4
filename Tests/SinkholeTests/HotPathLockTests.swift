import Foundation
import Testing

/// The modules that answer queries take their locks as `NIOLockedValueBox` (a plain pthread mutex),
/// never the standard library's `Synchronization.Mutex`. On Linux that one is a priority-inheritance
/// futex, which hands the lock straight to a sleeping waiter on unlock: two event loops taking one
/// lock per query then take turns sleeping. Under a slow-reader flood (bench/tcpslow.sh) both loops
/// spent ~80% of their time asleep in `futex_lock_pi` while clients waited hundreds of ms for an
/// answer; with pthread mutexes they ran ~95% of the time (docs/benchmarks.md, "Slow DNS-over-TCP
/// readers").
@Suite struct HotPathLockTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let modules = ["Sinkhole", "Upstream", "Enforcement", "DNSWire", "DNSFraming", "DomainLists"]

    @Test func no_module_that_answers_queries_takes_a_priority_inheritance_mutex() throws {
        var offenders: [String] = []
        var files = 0
        for module in Self.modules {
            let folder = Self.root.appendingPathComponent("Sources/\(module)")
            let walker = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            for case let file as URL in walker where file.pathExtension == "swift" {
                files += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    if code.range(of: #"(?<![\w.])Mutex\s*[<(]"#, options: .regularExpression) != nil {
                        offenders.append("\(module)/\(file.lastPathComponent):\(number + 1)")
                    }
                }
            }
        }
        #expect(files > 50, "found only \(files) source files under \(Self.root.path)")
        #expect(offenders.isEmpty, "Synchronization.Mutex on the query path (use NIOLockedValueBox): \(offenders)")
    }
}
