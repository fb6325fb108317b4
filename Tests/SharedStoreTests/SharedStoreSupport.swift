import DomainLists
import Enforcement
@testable import Engine
import Foundation
import PostgresStore
import ScrollOffCore
import Store
import Synchronization
import TestSupport

/// One clock for both helpers of a test (the household's time base), moved by hand.
final class HouseholdClock: TimeSource {
    private let wall = Mutex<Int64>(1_795_003_200_000) // Wednesday 2026-11-18 12:00 UTC
    func read() -> ClockReading {
        let w = wall.withLock { $0 }
        let boot = UInt64(w - 1_795_000_000_000) * 1_000_000 + 5_000_000_000_000
        return ClockReading(wall: Instant(millisecondsSince1970: w), monotonicNanoseconds: boot, bootNanoseconds: boot, bootID: "household-boot",
                            wallSynchronised: true)
    }
    func pass(_ span: Span) { wall.withLock { $0 += span.milliseconds } }
}

enum SharedFixture {
    static let catalog: Catalog = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try! Catalog.load(folder: root.appendingPathComponent("blocklists").path)
    }()

    static func configuration(preset: Preset = .balanced) -> EngineConfiguration {
        EngineConfiguration(stateDirectory: "/nonexistent", catalog: catalog, buildDate: Instant(secondsSince1970: 1_767_225_600),
                            defaultTimeZoneID: "UTC", defaultPreset: preset)
    }

    /// A helper on the shared store: its own connection, the engine, and (if `listening`) the task
    /// that reloads it when the other commits.
    static func node(_ name: String, on db: TestPostgres, clock: HouseholdClock, listening: Bool = true, preset: Preset = .balanced) async throws
        -> (engine: HelperEngine, store: PostgresStateStore, listener: Task<Void, Never>?)
    {
        let store = try PostgresStateStore(location: db.location, node: name, statementTimeout: .seconds(2))
        let engine = try await HelperEngine.start(configuration: configuration(preset: preset), store: store, timeSource: clock)
        guard listening else { return (engine, store, nil) }
        let listener = PostgresListener(store: store, pollInterval: .milliseconds(500))
        let task = Task { await listener.run { _ in await engine.reloadFromStore() } }
        return (engine, store, task)
    }

    /// The household's invariants, read from the database: balance == Σ ledger and never below
    /// zero for every profile (SPEC §4), and at most one open grant per entry (one spend, peek or
    /// token at a time).
    static func invariantProblems(_ store: PostgresStateStore) throws -> [String] {
        var problems = try store.verifyLedger().compactMap(\.problem)
        problems += try store.openGrantsPerEntry().filter { $0.count > 1 }.map { "\($0.profile)/\($0.entry): \($0.count) open grants" }
        return problems
    }

    /// Whether `condition` holds within `seconds`, looked at every 10 ms.
    static func eventually(seconds: Int = 10, _ condition: () async -> Bool) async -> Bool {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(seconds) {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

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
    /// This helper's own loaded copy of the books: each profile's wallet balance as it holds it
    /// in memory, and the household version (`knownVersion`) that copy is of. Read in one turn
    /// of the actor, so a reload or a commit is never half seen.
    func loadedBooks(_ store: PostgresStateStore) -> (version: Int64?, balances: [String: Int64]) {
        (store.knownVersion, Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, $0.account.wallet.balanceSeconds) }))
    }

    /// Whether the DNS side of this helper blocks `name` now, from its snapshot alone.
    nonisolated func blocks(_ name: String) async -> Bool {
        let now = await trustedNow()
        let enforcement = box.enforcement
        let bytes = SharedFixture.wire(name)
        return bytes.withUnsafeBytes { enforcement.decide(wire: $0, client: ClientIP("127.0.0.1") ?? .unknown, now: now) }.blocked
    }
}

extension TestPostgres {
    /// The server on its Unix socket, as the stores take it.
    var location: PostgresLocation { try! PostgresLocation(parsing: socketURL) }
}
