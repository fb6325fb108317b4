@testable import Engine
import ControlAPI
import ControlServer
import Foundation
import ScrollOffCore
import Store
import Synchronization
import Testing

/// The engine reaches its state only through `StateStore`, so a second backend can hold it.
@Suite struct StateStoreTests {
    @Test func an_engine_on_another_state_store_loads_commits_and_reads_through_it() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let store = try RecordingStateStore(directory: dir)
        let engine = try await HelperEngine.start(configuration: Fixture.configuration(dir), store: store, timeSource: time)
        #expect(store.loads == 1)
        let startCommits = store.commits.count

        _ = try await engine.block(["instagram"], reason: "homework")
        #expect(await engine.decision("www.instagram.com").blocked)
        // The block and its rule-change event went to this store, in one commit.
        #expect(store.commits.count == startCommits + 1)
        let events = store.commits.last.map { $0.operations.compactMap { op -> StoredEvent? in
            if case .appendEvent(let e) = op { e } else { nil }
        } } ?? []
        #expect(events.contains { $0.kind == .ruleChange && $0.ruleChange?.entries == ["instagram"] })
        // Reads go through it too: the events the command wrote come back from it.
        #expect(try await engine.events().map(EventReport.init).contains { $0.kind == EventKind.ruleChange.rawValue })
        #expect(store.reads > 0)

        // A restart on the same backend finds the block in force.
        let again = try await HelperEngine.start(configuration: Fixture.configuration(dir), store: store, timeSource: time)
        #expect(await again.decision("www.instagram.com").blocked)
        #expect(store.loads == 2)
    }
}

/// A second `StateStore`: it keeps every change the engine commits and counts loads and reads,
/// and hands each call on to a SQLite `Store` so the state is real.
final class RecordingStateStore: StateStore {
    private let backing: Store
    private let log = Mutex<(loads: Int, reads: Int, commits: [StateChange])>((0, 0, []))

    init(directory: String) throws {
        backing = try Store(directory: directory)
    }

    var loads: Int { log.withLock { $0.loads } }
    var reads: Int { log.withLock { $0.reads } }
    var commits: [StateChange] { log.withLock { $0.commits } }
    var location: String { "recording:" + backing.location }

    private func read<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        log.withLock { $0.reads += 1 }
        return try body()
    }

    func load() throws(StoreError) -> StoredState {
        log.withLock { $0.loads += 1 }
        return try backing.load()
    }

    func commit(_ change: StateChange, anchor: ClockAnchor) throws(StoreError) -> CommitReceipt {
        let receipt = try backing.commit(change, anchor: anchor)
        log.withLock { $0.commits.append(change) }
        return receipt
    }

    func applyRetention(now: Instant, days: Int) throws(StoreError) -> RetentionReport {
        try backing.applyRetention(now: now, days: days)
    }

    func dailyTotals(profile: String) throws(StoreError) -> [DailyTotals] { try read { () throws(StoreError) in try backing.dailyTotals(profile: profile) } }
    func recordOnce(key: String, event: StoredEvent) throws(StoreError) -> Bool { try backing.recordOnce(key: key, event: event) }
    func isMarked(key: String, profile: String) throws(StoreError) -> Bool { try read { () throws(StoreError) in try backing.isMarked(key: key, profile: profile) } }
    func latestEvent(kind: EventKind, profile: String) throws(StoreError) -> StoredEvent? {
        try read { () throws(StoreError) in try backing.latestEvent(kind: kind, profile: profile) }
    }
    func events(since: Instant?, profile: String?, kinds: Set<EventKind>?) throws(StoreError) -> [StoredEvent] {
        try read { () throws(StoreError) in try backing.events(since: since, profile: profile, kinds: kinds) }
    }
    func exportCSV(profiles: Set<String>?) throws(StoreError) -> String { try read { () throws(StoreError) in try backing.exportCSV(profiles: profiles) } }
    func exportRows(profiles: Set<String>?) throws(StoreError) -> [ExportRow] { try read { () throws(StoreError) in try backing.exportRows(profiles: profiles) } }
    func verifyLedger() throws(StoreError) -> [LedgerBalance] { try read { () throws(StoreError) in try backing.verifyLedger() } }
    func integrityCheck() throws(StoreError) -> IntegrityReport { try read { () throws(StoreError) in try backing.integrityCheck() } }
}

extension HelperEngine {
    /// The SQLite `Store` the fixtures open, for tests that reach into its database.
    var sqliteStore: Store { store as! Store }
}
