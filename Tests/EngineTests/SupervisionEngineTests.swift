import ControlAPI
import Engine
import Foundation
import ScrollOffCore
import Store
import Synchronization
import Testing

/// Pause (SPEC §5a) and daily allowances (SPEC §4a) through the engine: the published enforcement
/// flips at once for the paused profile only, ends at its instant with no timer, survives a
/// restart and a store that refuses writes; allowances are granted, spent first and kept across a
/// restart with balance == Σ ledger.
@Suite struct SupervisionEngineTests {
    static let kidClient = "192.0.2.1"

    @Test func a_pause_blocks_every_name_for_the_profile_only_and_ends_on_time_without_a_timer() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.addProfile("kid", clients: ["192.0.2.0/28"])
        #expect(await !engine.decision("news.example.net", client: Self.kidClient).blocked)
        let answer = try await engine.pause(profile: "kid", for: .minutes(45), reason: "dinner")
        #expect(answer.pause?.end == Fixture.noon + .minutes(45))
        #expect(await engine.decision("news.example.net", client: Self.kidClient).blocked, "an unnamed name is blocked for the kid")
        #expect(await !engine.decision("news.example.net", client: "127.0.0.1").blocked, "the default profile is not paused")
        // No command and no tick: the published snapshot ends the pause at its instant.
        time.pass(.minutes(44))
        #expect(await engine.decision("news.example.net", client: Self.kidClient).blocked)
        time.pass(.minutes(1))
        #expect(await !engine.decision("news.example.net", client: Self.kidClient).blocked)
    }

    @Test func a_pause_survives_a_restart_and_resume_lifts_it_with_events() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.addProfile("kid", clients: ["192.0.2.0/28"])
            _ = try await engine.pause(profile: "kid", until: LocalTime(hour: 19, minute: 30), reason: "dinner")
        }
        let again = try await Fixture.start(dir, time)
        #expect(await again.decision("news.example.net", client: Self.kidClient).blocked)
        #expect(try await again.status(profile: "kid").pause?.reason == "dinner")
        _ = try await again.resume(profile: "kid")
        #expect(await !again.decision("news.example.net", client: Self.kidClient).blocked)
        let changes = try await again.events(profile: "kid").compactMap { $0.ruleChange?.change }
        #expect(changes.contains("paused") && changes.contains("resumed"), "\(changes)")
        #expect(await refusal { () async throws(EngineError) in try await again.resume(profile: "kid") }?.rule == .notBlocked)
    }

    @Test func nothing_opens_during_a_pause() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.block(["instagram"])
        _ = try await engine.pause(profile: HelperEngine.defaultProfile, for: .minutes(10))
        let refused = await refusal { () async throws(EngineError) in try await engine.peek("instagram") }
        #expect(refused?.rule == .paused)
        #expect(refused?.opensAt == Fixture.noon + .minutes(10))
    }

    @Test func a_pause_holds_when_the_store_refuses_writes() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let store = try RefusingStateStore(directory: dir)
        let engine = try await HelperEngine.start(configuration: Fixture.configuration(dir), store: store, timeSource: time)
        _ = try await engine.addProfile("kid", clients: ["192.0.2.0/28"])
        _ = try await engine.pause(profile: "kid", for: .minutes(30))
        store.refusing = true
        // A pause made while the disk is full still takes effect, and the one in force ends on time.
        _ = try await engine.pause(profile: "kid", for: .minutes(20))
        #expect(await engine.decision("news.example.net", client: Self.kidClient).blocked)
        time.pass(.minutes(20))
        #expect(await !engine.decision("news.example.net", client: Self.kidClient).blocked)
    }

    @Test func an_allowance_is_granted_spent_first_and_kept_across_a_restart() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        do {
            let engine = try await Fixture.start(dir, time)
            // Set before the block: once the block's cooldown runs, a new allowance is a loosening it refuses.
            _ = try await engine.setAllowance(seconds: 600, entries: ["youtube"], days: .daily, profile: HelperEngine.defaultProfile)
            _ = try await engine.block(["youtube"])
            _ = try await engine.use("youtube", for: .minutes(4))
            time.pass(.minutes(5))
            // The timer's commit writes the spend's end (a helper that dies before it charges nothing, SPEC §4).
            try await engine.tick()
            let status = try await engine.status()
            #expect(status.entries.first { $0.id == "youtube" }?.allowanceLeftSeconds == 360)
            #expect(status.credit.balanceSeconds == 360 + 120, "the starter credit is untouched")
        }
        let again = try await Fixture.start(dir, time)
        let kept = try await again.allowances(profile: HelperEngine.defaultProfile)
        #expect(kept.allowances.first?.leftTodaySeconds == 360, "\(kept)")
        for balance in try await again.sqliteStore.verifyLedger() { #expect(balance.ledgerSumSeconds == balance.balanceSeconds, "\(balance)") }
    }

    @Test func raising_an_allowance_meets_the_cooldown_and_lowering_does_not() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.block(["youtube"])
        let raised = await refusal { () async throws(EngineError) in
            try await engine.setAllowance(seconds: 3600, entries: ["youtube"], days: .daily, profile: HelperEngine.defaultProfile)
        }
        #expect(raised?.rule == .cooldown)
        #expect(raised?.opensAt == Fixture.noon + .hours(2))
        time.pass(.hours(2))
        let set = try await engine.setAllowance(seconds: 3600, entries: ["youtube"], days: .daily, profile: HelperEngine.defaultProfile)
        #expect(set.allowances.first?.leftTodaySeconds == 3600, "the answer shows today's share, granted by the same commit")
        _ = try await engine.setAllowance(seconds: 1800, entries: ["youtube"], days: .weekends, profile: HelperEngine.defaultProfile)
        let again = await refusal { () async throws(EngineError) in
            try await engine.setAllowance(seconds: 3600, entries: ["youtube"], days: .weekends, profile: HelperEngine.defaultProfile)
        }
        #expect(again?.rule == .cooldown, "lowering started the allowance's own cooldown")
    }

    @Test func an_allowance_naming_more_entries_than_its_bound_is_refused_before_anything_is_resolved() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        let many = (0...Allowance.mostEntries).map { "site\($0).example" }
        for attempt in 0..<2 {
            do {
                if attempt == 0 {
                    _ = try await engine.setAllowance(seconds: 600, entries: many, days: .daily, profile: HelperEngine.defaultProfile)
                } else {
                    _ = try await engine.clearAllowance(entries: many, days: nil, profile: HelperEngine.defaultProfile)
                }
                Issue.record("\(many.count) entries were taken")
            } catch {
                #expect("\(error)".contains("at most \(Allowance.mostEntries) entries; this one named \(many.count)"), "\(error)")
            }
        }
        let allowed = try await engine.setAllowance(seconds: 600, entries: Array(many.prefix(Allowance.mostEntries)), days: .daily,
                                                    profile: HelperEngine.defaultProfile)
        #expect(allowed.allowances.first?.allowance.entries.count == Allowance.mostEntries)
    }

    @Test func a_member_may_not_pause_or_resume_and_is_told_whom_to_ask() {
        let decision = GroupMembershipAuthorizer(helperUID: 4_000_000).decide(
            CallerIdentity(uid: 4_000_001, gid: 4_000_001, pid: 1), profile: "kid",
            access: ProfileAccess(owners: [4_000_002], members: [4_000_001]), action: .supervise)
        guard case .deniedByRole(let reason) = decision else {
            Issue.record("a member must be refused by role, got \(decision)")
            return
        }
        #expect(reason.contains("its owners (uid 4000002)"))
        #expect(reason.contains("pause or resume it"))
    }
}

/// A `StateStore` whose commits fail while `refusing` is set (a full disk), over a real store.
final class RefusingStateStore: StateStore {
    private let backing: Store
    private let flag = Mutex(false)
    var refusing: Bool {
        get { flag.withLock { $0 } }
        set { flag.withLock { $0 = newValue } }
    }

    init(directory: String) throws { backing = try Store(directory: directory) }

    var location: String { backing.location }
    func load() throws(StoreError) -> StoredState { try backing.load() }
    func commit(_ change: StateChange, anchor: ClockAnchor) throws(StoreError) -> CommitReceipt {
        if refusing { throw StoreError.invalidRow(table: "ledger", detail: "disk full (test)") }
        return try backing.commit(change, anchor: anchor)
    }
    func applyRetention(now: Instant, days: Int) throws(StoreError) -> RetentionReport { try backing.applyRetention(now: now, days: days) }
    func dailyTotals(profile: String) throws(StoreError) -> [DailyTotals] { try backing.dailyTotals(profile: profile) }
    func recordOnce(key: String, event: StoredEvent) throws(StoreError) -> Bool { try backing.recordOnce(key: key, event: event) }
    func isMarked(key: String, profile: String) throws(StoreError) -> Bool { try backing.isMarked(key: key, profile: profile) }
    func latestEvent(kind: EventKind, profile: String) throws(StoreError) -> StoredEvent? { try backing.latestEvent(kind: kind, profile: profile) }
    func events(since: Instant?, profile: String?, kinds: Set<EventKind>?) throws(StoreError) -> [StoredEvent] {
        try backing.events(since: since, profile: profile, kinds: kinds)
    }
    func exportCSV(profiles: Set<String>?) throws(StoreError) -> String { try backing.exportCSV(profiles: profiles) }
    func exportRows(profiles: Set<String>?) throws(StoreError) -> [ExportRow] { try backing.exportRows(profiles: profiles) }
    func verifyLedger() throws(StoreError) -> [LedgerBalance] { try backing.verifyLedger() }
    func integrityCheck() throws(StoreError) -> IntegrityReport { try backing.integrityCheck() }
}
