#if canImport(Glibc)
import Glibc
#endif
import ControlServer
import Engine
import Foundation
import Testing

extension ControlEndToEnd {
/// `[notify] command` (SPEC §9a): owners are told of a new request for time by their own program,
/// run without a shell with the event as JSON on standard input; other events run nothing.
@Suite
struct NotifyHookTests {
    @Test func a_new_request_for_time_runs_the_hook_with_the_event_as_json_and_nothing_else_does() async throws {
        let server = try await EngineServer()
        let folder = try makeTemporaryDirectory()
        let service = Task { try await NotifyHookService(engine: server.engine).run() }
        defer {
            service.cancel()
            try? FileManager.default.removeItem(atPath: folder)
            Task { await server.stop() }
        }
        // `tee -a FILE` writes its standard input to FILE: the hook's input, byte for byte.
        var settings = DigestHookSettings()
        settings.command = ["/usr/bin/tee", "-a", folder + "/said"]
        await server.engine.setNotifyHook(settings)
        try await EventStreamVerbTests.waitForReaders(server, 1)

        #expect(try await server.cli(["adjust", "+5m", "--note", "not a request"]).status == 0)
        let note = "maths done $(touch \(folder)/shell) \"really\""
        let asked = try await server.cli(["ask", "15m", "--note", note])
        #expect(asked.status == 0, "\(asked)")
        let deadline = ContinuousClock.now + .seconds(10)
        var said = ""
        while ContinuousClock.now < deadline {
            said = (try? String(contentsOfFile: folder + "/said", encoding: .utf8)) ?? ""
            if said.hasSuffix("\n") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let lines = said.split(separator: "\n")
        #expect(lines.count == 1, "one event, the request: \(said)")
        let event = try #require(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any], "\(said)")
        #expect(event["kind"] as? String == "timeRequested" && event["profile"] as? String == "default", "\(event)")
        #expect((event["message"] as? String)?.contains(note) == true, "the note arrives as text: \(event)")
        #expect(event["id"] as? Int != nil)
        #expect(!FileManager.default.fileExists(atPath: folder + "/shell"), "nothing ran the note through a shell")
    }
}
}
