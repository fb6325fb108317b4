#if canImport(Glibc)
import ControlServer
import Engine
import Glibc
#endif
import ControlAPI
import DomainLists
import Foundation
import Enforcement
import Helper
import Logging
import ScrollOffCore
import ServiceKit
import Synchronization
import Testing

/// The engine's clocks for the verb tests: they start at a chosen instant and then follow real
/// time (so the CLI's requests see time pass normally), and `shift` moves wall and boot clock
/// together, as if that much time had passed while the helper ran.
final class SteppedTimeSource: TimeSource {
    private let base: Instant
    private let started = ContinuousClock.now
    private let shifted = Mutex<Int64>(0)

    init(startingAt base: Instant) { self.base = base }

    func shift(_ span: Span) { shifted.withLock { $0 += span.milliseconds } }

    func read() -> ClockReading {
        let elapsed = ContinuousClock.now - started
        let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000 + shifted.withLock { $0 }
        return ClockReading(wall: base + Span(milliseconds: ms), monotonicNanoseconds: 5_000_000_000_000 + UInt64(ms) * 1_000_000,
                            bootNanoseconds: 5_000_000_000_000 + UInt64(ms) * 1_000_000, bootID: "verbs-test-boot")
    }

    var now: Instant { read().wall }
}

/// `HelperEngine` and `HelperControl`'s server in this process, on a temp state folder and socket,
/// the way HelperMain wires them. The default profile is in UTC and the CLI runs with TZ=UTC, so
/// local times in the output are predictable.
final class EngineServer: Sendable {
    /// Wednesday 2026-11-18 12:00:00 UTC.
    static let noon = Instant(secondsSince1970: 1_795_003_200)

    let directory: String
    let socketPath: String
    let time: SteppedTimeSource
    let engine: HelperEngine
    let control: HelperControl
    let bound: BoundControlServer
    private let serving: Task<Void, any Error>

    init(startingAt start: Instant = EngineServer.noon, preset: Preset = .strict, socketMode: mode_t = 0o660,
         directoryMode: mode_t = 0o700, authorizer: any ControlAuthorizer = GroupMembershipAuthorizer(),
         lists: ListsConfiguration = ListsConfiguration(), logger captured: Logger? = nil, reusing: String? = nil) async throws {
        directory = try reusing ?? makeTemporaryDirectory(mode: directoryMode)
        socketPath = directory + "/ctl.sock"
        var logger = Logger(label: "verbs-test")
        logger.logLevel = .critical
        if let captured { logger = captured }
        let time = SteppedTimeSource(startingAt: start)
        self.time = time
        let configuration = EngineConfiguration(
            stateDirectory: directory + "/state", catalog: try Self.catalog(), buildDate: Instant(secondsSince1970: 1_767_225_600),
            defaultTimeZoneID: "UTC", defaultPreset: preset
        )
        engine = try await HelperEngine.start(configuration: configuration, timeSource: time, logger: logger)
        var paths = RuntimePaths.defaults(isRoot: false, environment: ["HOME": directory])
        paths.stateDirectory = directory + "/state"
        paths.controlSocket = socketPath
        control = await HelperControl(paths: paths, version: "test", engine: engine, lists: lists, authorizer: authorizer, socketMode: socketMode,
                                      clock: { time.now }, logger: logger)
        bound = try await control.server.bind()
        let bound = self.bound
        serving = Task { try await bound.serve() }
    }

    static func catalog() throws -> Catalog {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try EngineConfiguration.loadCatalog(folder: root.appendingPathComponent("blocklists").path)
    }

    /// Runs the CLI against this server in UTC.
    func cli(_ arguments: [String]) async throws -> ProcessResult {
        try await ControlEndToEndTests.cli(arguments, socket: socketPath, extraEnvironment: ["TZ": "UTC"])
    }

    /// Runs the CLI and decodes its `--json` output as a JSON object.
    func json(_ arguments: [String]) async throws -> [String: Any] {
        let result = try await cli(arguments + ["--json"])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw POSIXFailure(operation: "scrolloff \(arguments.joined(separator: " ")) → \(result)", code: 0)
        }
        return object
    }

    /// Whether the DNS side would block `name` for the default profile's clients now.
    /// The engine's timer is not running here, so its due work (a window edge, a grant's end) is
    /// done first, as the timer would have done it by now.
    func blocks(_ name: String) async -> Bool {
        try? await engine.tick()
        let now = await engine.trustedNow()
        var wire: [UInt8] = []
        for label in name.split(separator: ".") {
            wire.append(UInt8(label.utf8.count))
            wire.append(contentsOf: label.utf8)
        }
        wire.append(0)
        let enforcement = engine.box.enforcement
        return wire.withUnsafeBytes { enforcement.decide(wire: $0, client: .unknown, now: now) }.blocked
    }

    /// - Parameter removing: false keeps the folder, for a server started again on it (`reusing`).
    func stop(removing: Bool = true) async {
        await bound.close()
        _ = try? await serving.value
        if removing { try? FileManager.default.removeItem(atPath: directory) }
    }
}
