import DomainLists
import Enforcement
import Engine
import Foundation
import Helper
import ScrollOffCore
import Synchronization

/// A clock the test moves by hand: `pass` is time really passing (wall and boot clock together),
/// `setWall` is someone changing the system clock, `reboot` a new boot. With `followsRealTime`
/// the readings also run on with the process's own continuous clock, for the timer-loop test.
final class TestTimeSource: TimeSource {
    struct State {
        var wall: Int64
        var bootNanoseconds: UInt64
        var bootID: String
        /// What the kernel would say of NTP (`ClockReading.wallSynchronised`).
        var synchronised = false
    }

    private let state: Mutex<State>
    private let realStart: ContinuousClock.Instant?

    /// - Parameter bootNanoseconds: the boot clock's first reading. Code that reads the real
    ///   `CLOCK_BOOTTIME` against this clock's anchor (`Enforcement.now()`) sees the anchor's time
    ///   only while the real reading is below it; pass a value past any real uptime for that.
    init(wall: Instant, bootID: String = "boot-1", followsRealTime: Bool = false, bootNanoseconds: UInt64 = 5_000_000_000_000) {
        state = Mutex(State(wall: wall.millisecondsSince1970, bootNanoseconds: bootNanoseconds, bootID: bootID))
        realStart = followsRealTime ? ContinuousClock.now : nil
    }

    func read() -> ClockReading {
        var extra: Int64 = 0
        if let realStart {
            let d = ContinuousClock.now - realStart
            extra = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        }
        return state.withLock { s in
            ClockReading(wall: Instant(millisecondsSince1970: s.wall + extra),
                         monotonicNanoseconds: s.bootNanoseconds + UInt64(extra) * 1_000_000,
                         bootNanoseconds: s.bootNanoseconds + UInt64(extra) * 1_000_000, bootID: s.bootID,
                         wallSynchronised: s.synchronised)
        }
    }

    /// Time really passes.
    func pass(_ span: Span) {
        state.withLock { s in
            s.wall += span.milliseconds
            s.bootNanoseconds += UInt64(span.milliseconds) * 1_000_000
        }
    }

    /// The machine restarts: a new boot id and a boot clock counting from a few seconds.
    func reboot(as bootID: String) {
        state.withLock { s in
            s.bootID = bootID
            s.bootNanoseconds = 3_000_000_000
        }
    }

    /// The kernel reports NTP-synchronised time, or stops doing so.
    func setSynchronised(_ value: Bool) {
        state.withLock { $0.synchronised = value }
    }

    /// Someone sets the system clock; the boot clock does not move.
    func setWall(by span: Span) {
        state.withLock { $0.wall += span.milliseconds }
    }
}

enum Fixture {
    /// Wednesday 2026-11-18 12:00:00 UTC.
    static let noon = Instant(secondsSince1970: 1_795_003_200)
    static let buildDate = Instant(secondsSince1970: 1_767_225_600) // 2026-01-01

    static let catalog: Catalog = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        do {
            return try Catalog.load(folder: root.appendingPathComponent("blocklists").path)
        } catch {
            fatalError("the test catalog must load: \(error)")
        }
    }()

    static func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func configuration(_ dir: String, preset: Preset = .strict) -> EngineConfiguration {
        EngineConfiguration(stateDirectory: dir, catalog: catalog, extraAllowedHosts: ["lists.example.org"],
                            buildDate: buildDate, defaultTimeZoneID: "UTC", defaultPreset: preset)
    }

    static func start(_ dir: String, _ time: TestTimeSource, preset: Preset = .strict) async throws -> HelperEngine {
        try await HelperEngine.start(configuration: configuration(dir, preset: preset), timeSource: time)
    }

    /// `www.instagram.com` → `03 www 09 instagram 03 com 00` (RFC 1035 §3.1).
    static func wire(_ name: String) -> [UInt8] {
        var out: [UInt8] = []
        for label in name.split(separator: ".") {
            out.append(UInt8(label.utf8.count))
            out.append(contentsOf: label.utf8)
        }
        out.append(0)
        return out
    }
}

extension HelperEngine {
    /// The decision the DNS side would get for `name` from `client` now.
    nonisolated func decision(_ name: String, client: String = "127.0.0.1") async -> EnforcementDecision {
        let now = await trustedNow()
        let enforcement = box.enforcement
        let bytes = Fixture.wire(name)
        let ip = ClientIP(client) ?? .unknown
        return bytes.withUnsafeBytes { enforcement.decide(wire: $0, client: ip, now: now) }
    }
}

/// The refusal `body` throws, or nil when it succeeds or fails otherwise.
func refusal<T>(_ body: () async throws(EngineError) -> T) async -> Refusal? {
    do throws(EngineError) {
        _ = try await body()
        return nil
    } catch {
        return error.refusal
    }
}
