#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import Foundation
import Testing

extension ControlEndToEnd {
/// `scrolloff watch` on the event stream (SPEC §12): a member follows only the profiles they may
/// view, each event within a second of its commit; one who may view none is refused.
@Suite
struct EventStreamVerbTests {
    /// A CLI left running (`watch`), its output collected as it comes.
    final class Follower: @unchecked Sendable {
        let process: Process
        private let lock = NSLock()
        private var pending = ""
        private var errorText = ""
        private var arrived: [(line: String, at: ContinuousClock.Instant)] = []

        init(uid: UInt32?, _ arguments: [String], socket: String) throws {
            process = Process()
            if let uid {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", scrolloffBinary] + arguments + ["--socket", socket]
            } else {
                process.executableURL = URL(fileURLWithPath: scrolloffBinary)
                process.arguments = arguments + ["--socket", socket]
            }
            process.environment = ["PATH": "/usr/bin:/bin", "NO_COLOR": "1", "TZ": "UTC", "HOME": "/tmp"]
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            out.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                let now = ContinuousClock.now
                guard let self else { return }
                self.lock.withLock {
                    self.pending += text
                    while let newline = self.pending.firstIndex(of: "\n") {
                        self.arrived.append((String(self.pending[..<newline]), now))
                        self.pending.removeSubrange(...newline)
                    }
                }
            }
            err.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                guard let self else { return }
                self.lock.withLock { self.errorText += text }
            }
            try process.run()
        }

        var lines: [(line: String, at: ContinuousClock.Instant)] { lock.withLock { arrived } }
        var stderr: String { lock.withLock { errorText } }

        /// The JSON objects printed so far.
        var events: [[String: Any]] {
            lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.line.utf8)) as? [String: Any] }
        }

        /// Waits until a line satisfies `predicate`; returns when it arrived.
        func wait(seconds: Double = 10, for predicate: ([String: Any]) -> Bool) async throws -> ContinuousClock.Instant {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                for (line, at) in lines {
                    if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], predicate(object) { return at }
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw POSIXFailure(operation: "waiting for an event line; got \(lines.map(\.line)) stderr \(stderr)", code: 0)
        }

        /// SIGKILL: the test runner's children may inherit SIGTERM ignored.
        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    static func waitForReaders(_ server: EngineServer, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while server.engine.eventFeed.readerCount < count {
            guard ContinuousClock.now < deadline else { throw POSIXFailure(operation: "waiting for \(count) stream readers", code: 0) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func a_member_follows_only_their_profiles_events_each_within_a_second_of_its_commit() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        try await HouseholdVerbTests.household(server)
        let member = try Follower(uid: 40002, ["watch", "--json"], socket: server.socketPath)
        let root = try Follower(uid: nil, ["watch", "--json"], socket: server.socketPath)
        defer {
            member.stop()
            root.stop()
        }
        try await Self.waitForReaders(server, 2)

        // The default profile's change first: had it reached the member, it would come before the kids' one.
        #expect(try await server.cli(["block", "instagram"]).status == 0)
        let blocked = try await server.cli(["block", "tiktok", "--profile", "kids"])
        let answered = ContinuousClock.now
        #expect(blocked.status == 0, "\(blocked)")
        let arrived = try await member.wait { $0["profile"] as? String == "kids" && $0["kind"] as? String == "ruleChange" }
        #expect(arrived - answered < .seconds(1), "the member's watch printed the event \(arrived - answered) after the command returned")
        _ = try await root.wait { $0["profile"] as? String == "kids" }
        #expect(root.events.contains { $0["profile"] as? String == "default" && $0["kind"] as? String == "ruleChange" }, "\(root.lines.map(\.line))")
        #expect(!member.events.isEmpty && member.events.allSatisfy { $0["profile"] as? String == "kids" }, "\(member.lines.map(\.line))")
        // Ids are the event log's and grow.
        let ids = root.events.compactMap { $0["id"] as? Int }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "\(ids)")

        // Someone in no profile has nothing to follow: refused, not an empty stream.
        let stranger = try await run("/usr/bin/setpriv", ["--reuid=40003", "--regid=40003", "--clear-groups", scrolloffBinary, "watch",
                                                          "--socket", server.socketPath],
                                     environment: ["PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": "/tmp"])
        #expect(stranger.status == 1 && stranger.stderr.contains("not an owner or member of any profile"), "\(stranger)")
        // The member naming another profile is refused too.
        let other = try await curl(server.socketPath, "GET", "/v1/events/stream?profile=default",
                                   headers: ["Accept: text/event-stream"], asUser: 40002)
        #expect(other.status == 403, "\(other)")
        // Without Accept: text/event-stream the stream is not started (a plain GET would hang).
        let plain = try await curl(server.socketPath, "GET", "/v1/events/stream")
        #expect(plain.status == 406 && plain.body.contains("text/event-stream"), "\(plain)")
    }
}
}
