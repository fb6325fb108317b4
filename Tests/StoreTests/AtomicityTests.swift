import Foundation
import GRDB
import ScrollOffCore
import Testing
@testable import Store

@Suite struct AtomicityTests {
    /// Counts of the tables a wallet commit touches, plus the anchor, to compare before and after.
    static func footprint(_ store: Store) throws -> [String] {
        try store.read { db in
            var out: [String] = []
            for table in ["ledger", "events", "grants", "wallet_batches", "peeks", "bypass_lockouts", "exercise_sessions"] {
                out.append("\(table)=\(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? -1)")
            }
            out.append("anchor=\(try Int64.fetchOne(db, sql: "SELECT trusted FROM clock_anchor") ?? -1)")
            out.append("as_of=\(try Int64.fetchOne(db, sql: "SELECT as_of FROM wallet_state") ?? -1)")
            return out
        }
    }

    /// A peek's change: ledger row, events, grant and account, the kind of change that must land whole.
    static func peekChange(_ account: inout CreditAccount, at t: Instant) throws -> StateChange {
        let outcome = try account.peek("youtube", at: t)
        var change = StateChange()
        change.record(outcome, account: account.state, profile: Fixture.profile)
        #expect(outcome.rows.contains { $0.reason == .bypassCredit || $0.reason == .bypassFree } && !outcome.events.isEmpty)
        return change
    }

    @Test func a_constraint_violation_at_the_end_leaves_nothing_of_the_change() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        var account = try Fixture.busyAccount(in: store)
        let before = try Self.footprint(store)
        let t = account.state.wallet.asOf + .hours(1)
        var change = try Self.peekChange(&account, at: t)
        // A row for a profile that does not exist: the foreign key fails after everything else ran.
        change.append(.appendLedger(profile: "nobody", LedgerRow(time: t, deltaSeconds: 1, reason: .adjust)))
        #expect(throws: StoreError.invalidChange("a row refers to a profile that does not exist; save the profile first")) {
            try store.commit(change, anchor: Fixture.anchor(t))
        }
        #expect(try Self.footprint(store) == before)
        #expect(try store.verifyLedger().allSatisfy { $0.isConsistent })
    }

    @Test func a_trigger_failing_midway_rolls_back_the_rows_already_written() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        var account = try Fixture.busyAccount(in: store)
        try store.write { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER fail_on_peek_event BEFORE INSERT ON events WHEN NEW.kind = 'peekUsed'
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END
                """)
        }
        let before = try Self.footprint(store)
        let t = account.state.wallet.asOf + .hours(1)
        let change = try Self.peekChange(&account, at: t)
        // The ledger row and the grant event come before the failing event in the change.
        guard case .appendLedger = change.operations.first else { Issue.record("the change should start with its ledger row"); return }
        do {
            try store.commit(change, anchor: Fixture.anchor(t))
            Issue.record("the trigger did not fire")
        } catch {
            guard case .sqlite(_, _, let message) = error else { Issue.record("unexpected \(error)"); return }
            #expect(message.contains("injected failure"))
        }
        #expect(try Self.footprint(store) == before)
    }

    @Test func archiving_a_plan_that_does_not_exist_is_refused_whole() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let t = Fixture.start
        #expect(throws: StoreError.invalidChange("there is no plan 99")) {
            try store.commit(StateChange([.addPlan(profile: Fixture.profile, when: "a", then: "b", created: t), .archivePlan(id: 99)]),
                             anchor: Fixture.anchor(t))
        }
        #expect(try store.load().plans.isEmpty)
    }

    @Test func a_committed_change_is_visible_to_another_connection_when_commit_returns() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let other = try DatabaseQueue(path: dir.databasePath)
        var account = CreditAccount(state: CreditAccountState(asOf: Fixture.start), policy: Fixture.policy())
        for i in 1...5 {
            let t = Fixture.start + .minutes(Int64(i))
            let receipt = try Fixture.apply(store, &account, at: t) { try $0.adjust(Int64(i), note: "step \(i)", at: t) }
            let seen = try other.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM ledger ORDER BY id") }
            #expect(seen.suffix(receipt.ledgerIDs.count) == receipt.ledgerIDs[...])
            #expect(try other.read { db in try Int64.fetchOne(db, sql: "SELECT trusted FROM clock_anchor") } == t.millisecondsSince1970)
        }
    }
}
