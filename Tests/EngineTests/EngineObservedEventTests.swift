import ControlAPI
import ControlServer
import Engine
@testable import Firewall
import Foundation
import HostsMode
import ScrollOffCore
import Store
import Testing

/// What another module saw reaches the event log through one engine entry point,
/// `record(_: ObservedEvent)` (hosts mode's edits put back, the firewall's caught attempts), stamped
/// with the trusted clock and committed; nothing seen, nothing written.
@Suite("Engine: what other modules saw, recorded as events")
struct EngineObservedEventTests {
    @Test func caught_bypass_attempts_are_recorded_in_one_commit_at_the_trusted_time() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        time.pass(.minutes(5))
        await engine.record(CaughtBypassAttempts([BypassAttempt(client: "192.168.1.20", server: "8.8.8.8", port: 53),
                                                  BypassAttempt(client: "127.0.0.1", server: "1.1.1.1", port: 853)],
                                                 localAddresses: ["127.0.0.1"]))
        let rows = try await engine.exportRows().map(ExportRowReport.init).filter { $0.kind == "bypassAttempt" }
        #expect(rows.count == 2, "\(rows)")
        #expect(rows.allSatisfy { $0.timeMs == (Fixture.noon + .minutes(5)).millisecondsSince1970 && $0.profile == nil })
        #expect(rows.map(\.clientIP) == ["192.168.1.20", "127.0.0.1"])
        #expect(rows.last?.text?.hasPrefix("A program on this machine tried DNS over TLS to 1.1.1.1") == true, "\(rows)")
    }

    @Test func nothing_caught_writes_nothing() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        let before = try await engine.exportRows()
        await engine.record(CaughtBypassAttempts([], localAddresses: []))
        #expect(try await engine.exportRows() == before)
    }

    @Test func a_hosts_section_edit_put_back_is_a_machine_wide_tamper_event() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        let tampersBefore = try await engine.exportRows().map(ExportRowReport.init).filter { $0.kind == "tamper" }.count
        let edit = HostsSectionEdit(file: "/etc/hosts", linesRemoved: 2, linesAdded: 0, sectionRemoved: false, moved: false)
        await engine.record(HostsEditEvent(edit))
        let rows = try await engine.exportRows().map(ExportRowReport.init).filter { $0.kind == "tamper" }.dropFirst(tampersBefore)
        #expect(rows.count == 1, "\(rows)")
        #expect(rows.first?.profile == nil)
        #expect(rows.first?.text == edit.message)
    }
}

/// The shape docs/architecture.md promises: the engine's entry points in at most five files of
/// Sources/Engine, and no other module extends the actor but the control server's doctor facts
/// (hosts mode and the firewall hand it `ObservedEvent` values instead).
@Suite("Engine: the actor is extended from a handful of files")
struct EngineShapeTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func filesExtendingHelperEngine() throws -> [String] {
        let sources = root.appending(path: "Sources")
        guard let walker = FileManager.default.enumerator(atPath: sources.path) else { return [] }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: sources.appending(path: path), encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("extension HelperEngine:") || $0.hasPrefix("extension HelperEngine {") }) {
                found.append(path)
            }
        }
        return found.sorted()
    }

    @Test func the_engine_is_extended_from_at_most_five_files_and_only_the_doctor_outside_it() throws {
        let files = try Self.filesExtendingHelperEngine()
        let inEngine = files.filter { $0.hasPrefix("Engine/") }
        #expect(!inEngine.isEmpty, "the scan found the engine's files")
        #expect(inEngine.count <= 5, "\(inEngine.count) files in Sources/Engine extend HelperEngine: \(inEngine)")
        #expect(files.filter { !$0.hasPrefix("Engine/") } == ["ControlServer/HelperEngine+Doctor.swift"], "\(files)")
    }
}
