import ControlAPI
@testable import Engine
@testable import Helper
import ControlServer
import ScrollOffCore
@testable import Store
import Testing

/// SPEC §3: a start on a state disk that refuses writes (full) but reads fine enforces the loaded
/// rules; the start's bookkeeping is held and written by the first commit that succeeds, and the
/// downtime earns exactly what a start on a healthy disk gives it (nothing, SPEC §4 and §11).
@Suite struct EngineFullDiskStartTests {
    @Test func a_start_whose_write_fails_enforces_the_rules_and_books_the_same_as_a_healthy_start() async throws {
        let faultyDir = Fixture.temporaryDirectory(), healthyDir = Fixture.temporaryDirectory()
        let faultyTime = TestTimeSource(wall: Fixture.noon), healthyTime = TestTimeSource(wall: Fixture.noon)
        for (dir, time) in [(faultyDir, faultyTime), (healthyDir, healthyTime)] {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.block(["instagram"])
            time.pass(.hours(1))
            try await engine.tick()
            time.pass(.hours(2)) // the helper is down
        }
        // The disk refuses every write from now on (each commit writes the clock anchor).
        try Self.failWrites(in: faultyDir)

        let faulty = try await Fixture.start(faultyDir, faultyTime)
        let healthy = try await Fixture.start(healthyDir, healthyTime)
        #expect(await faulty.decision("www.instagram.com").blocked)
        #expect(await faulty.writeFailure() != nil, "doctor must see the failing start write")
        #expect(try await WalletReport(faulty.wallet()).balanceSeconds == WalletReport(healthy.wallet()).balanceSeconds)

        for time in [faultyTime, healthyTime] { time.pass(.minutes(10)) }
        await #expect(throws: EngineError.self) { try await faulty.tick() }
        try await healthy.tick()
        #expect(await faulty.decision("www.instagram.com").blocked)

        try await faulty.restoreStateWrites()
        try await faulty.tick()
        #expect(await faulty.writeFailure() == nil)
        let balance = try await WalletReport(healthy.wallet()).balanceSeconds
        #expect(try await WalletReport(faulty.wallet()).balanceSeconds == balance)
        let check = try #require(try await faulty.store.verifyLedger().first)
        #expect(check.isConsistent)
        #expect(check.balanceSeconds == balance)

        // What was written is what a later start loads: nothing paid twice for the downtime.
        faultyTime.pass(.minutes(1)); healthyTime.pass(.minutes(1))
        let reloaded = try await Fixture.start(faultyDir, faultyTime)
        let reference = try await Fixture.start(healthyDir, healthyTime)
        #expect(try await WalletReport(reloaded.wallet()).balanceSeconds == WalletReport(reference.wallet()).balanceSeconds)
        #expect(try await reloaded.store.verifyLedger().first?.isConsistent == true)
    }

    @Test func stop_while_writes_fail_ends_the_spend_at_once_and_the_books_charge_only_up_to_it() async throws {
        let faultyTime = TestTimeSource(wall: Fixture.noon), healthyTime = TestTimeSource(wall: Fixture.noon)
        let faulty = try await Fixture.start(Fixture.temporaryDirectory(), faultyTime)
        let healthy = try await Fixture.start(Fixture.temporaryDirectory(), healthyTime)
        for engine in [faulty, healthy] {
            _ = try await engine.block(["instagram"])
            _ = try await engine.use("instagram")
        }
        try await faulty.failStateWrites()
        for time in [faultyTime, healthyTime] { time.pass(.seconds(30)) }

        let stopped = try await faulty.stop()
        let reference = try await healthy.stop()
        #expect(stopped.stopped == reference.stopped)
        #expect(stopped.balanceSeconds == reference.balanceSeconds)
        #expect(stopped.message.contains("refuses writes"), "\(stopped.message)")
        #expect(await faulty.decision("www.instagram.com").blocked)
        #expect(await faulty.writeFailure() != nil)

        // The disk stays full for a minute: nothing more is charged, then the books catch up.
        for time in [faultyTime, healthyTime] { time.pass(.minutes(1)) }
        await #expect(throws: EngineError.self) { try await faulty.tick() }
        try await faulty.restoreStateWrites()
        try await faulty.tick()
        try await healthy.tick()
        let balance = try await WalletReport(healthy.wallet()).balanceSeconds
        #expect(balance == reference.balanceSeconds)
        #expect(try await WalletReport(faulty.wallet()).balanceSeconds == balance)
        let check = try #require(try await faulty.store.verifyLedger().first)
        #expect(check.isConsistent && check.balanceSeconds == balance)
    }

    @Test func the_receipt_of_a_commit_carrying_the_held_start_names_only_the_commands_own_rows() {
        let held = StateChange([.addPlan(profile: "p", when: "w", then: "t", created: Fixture.noon),
                                .addAlternative(profile: "p", text: "walk", created: Fixture.noon)])
        let own = StateChange([.addPlan(profile: "p", when: "w2", then: "t2", created: Fixture.noon)])
        #expect(CommitBooks.joined(held, own).operations.count == 3)
        #expect(CommitBooks.joined(nil, own).operations.count == 1)
        var written = CommitReceipt()
        written.planIDs = [7, 8]
        written.alternativeIDs = [3]
        let mine = CommitBooks.receipt(written, dropping: held)
        #expect(mine.planIDs == [8])
        #expect(mine.alternativeIDs.isEmpty)
    }

    /// Persistent triggers (not TEMP): the engine's own connection, opened later, sees them.
    static func failWrites(in dir: String) throws {
        let store = try Store(directory: dir)
        try store.queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TRIGGER fail_anchor_insert BEFORE INSERT ON clock_anchor BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
                CREATE TRIGGER fail_anchor_update BEFORE UPDATE ON clock_anchor BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
                """)
        }
    }
}
