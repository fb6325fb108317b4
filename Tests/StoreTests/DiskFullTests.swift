import Foundation
import GRDB
import ScrollOffCore
import Testing
@testable import Store

/// Disk full is simulated with SQLite's `max_page_count`, which makes a write that needs one page
/// more fail with SQLITE_FULL, the same code SQLite's unix VFS returns for ENOSPC. (A tmpfs mount
/// would need root in the test environment, which CI does not have.)
@Suite struct DiskFullTests {
    @Test func a_full_disk_gives_the_typed_error_and_loses_nothing_acknowledged() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        var account = CreditAccount(state: CreditAccountState(asOf: Fixture.start), policy: Fixture.policy())
        try store.queue.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages + 4)")
        }
        var acknowledged: [Int64] = []
        var failure: StoreError?
        var pending = StateChange()
        var t = Fixture.start
        for i in 1...500 {
            t = t + .minutes(1)
            let note = "top-up \(i) " + String(repeating: "n", count: 1500)
            let outcome: CreditOutcome
            do { outcome = try account.adjust(1, note: note, at: t) } catch { Issue.record("\(error)"); return }
            var change = StateChange()
            change.record(outcome, account: account.state, profile: Fixture.profile)
            do {
                acknowledged += try store.commit(change, anchor: Fixture.anchor(t)).ledgerIDs
            } catch {
                failure = error
                pending = change
                break
            }
        }
        let error = try #require(failure)
        #expect(error == .diskFull(path: dir.databasePath))
        #expect(error.description == "the disk holding \(dir.databasePath) is full; free space and the helper will retry — nothing was lost")
        #expect(acknowledged.count >= 2)

        // Nothing acknowledged is lost, and the refused change left nothing behind.
        #expect(try store.ledger(profile: Fixture.profile).map(\.id) == acknowledged)
        #expect(try store.verifyLedger().first?.isConsistent == true)

        // Space comes back (the limit is lifted) and the helper retries the same change: it lands whole.
        try store.queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        let retried = try store.commit(pending, anchor: Fixture.anchor(t))
        #expect(try store.ledger(profile: Fixture.profile).map(\.id) == acknowledged + retried.ledgerIDs)
        let check = try #require(try store.verifyLedger().first)
        #expect(check.isConsistent)
        #expect(check.balanceSeconds == Int64(acknowledged.count + 1))
        #expect(check.balanceSeconds == account.wallet.balanceSeconds)
    }
}
