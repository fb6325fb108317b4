import ControlAPI
@testable import Engine
import Foundation
import PostgresStore
import ScrollOffCore
import Store
import TestSupport
import Testing

/// The kinds of state the other shared-store tests do not carry across: schedules, tokens,
/// plans, alternatives and requests for time, each made through one helper and seen and acted on
/// through the other. One pair of helpers for all of them (they are the slow part).
@Suite(.serialized) struct SharedBypassKindsTests {
    @Test func a_schedule_plan_alternative_token_and_request_made_through_one_helper_are_seen_and_acted_on_through_the_other() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let clock = HouseholdClock() // Wednesday 12:00 UTC
        // Flexible: its tokens (balanced and strict have none).
        let a = try await SharedFixture.node("a", on: db, clock: clock, preset: .flexible)
        let b = try await SharedFixture.node("b", on: db, clock: clock, preset: .flexible)
        defer { a.listener?.cancel(); b.listener?.cancel() }
        let profile = HelperEngine.defaultProfile
        /// B holds what A last committed (its listener reloaded it).
        func bCaughtUp() async -> Bool {
            await SharedFixture.eventually { b.store.knownVersion != nil && b.store.knownVersion == a.store.knownVersion }
        }

        // A schedule in force now, made through A: B's DNS answers and B's status.
        _ = try await a.engine.addSchedule(ScheduleRequest(name: "lunch", from: "11:00", to: "13:00", entries: ["reddit"]), profile: profile)
        #expect(await SharedFixture.eventually { await b.engine.blocks("www.reddit.com") }, "A's schedule never blocked on B")
        let status = try await b.engine.status(profile: profile)
        #expect(status.entries.contains { $0.status.entry.rawValue == "reddit" && $0.status.state.isBlocking }, "\(status.entries)")

        // A plan and an alternative made through A: B's bypass preview shows them.
        let plan = try await a.engine.addPlan(when: "I reach for my phone at lunch", then: "I eat away from it", profile: profile)
        _ = try await a.engine.addAlternative("a walk round the block", profile: profile)
        #expect(await bCaughtUp(), "B never caught up with A's plan and alternative")
        let outlook = try await b.engine.bypassPreview(profile: profile, entry: "reddit")
        #expect(outlook.plan?.id == plan.id && outlook.plansOnFile == 1, "\(outlook)")
        #expect(outlook.alternatives.contains("a walk round the block"), "\(outlook)")

        // A token used through B opens reddit on both and is counted once, on both.
        let tokensBefore = outlook.tokensLeftMonth
        let token = try await b.engine.token("reddit", profile: profile)
        #expect(token.tokensLeftMonth == tokensBefore - 1)
        #expect(await SharedFixture.eventually { await !a.engine.blocks("www.reddit.com") }, "B's token never opened reddit on A")
        #expect(try await a.engine.status(profile: profile).credit.tokensLeftThisMonth == tokensBefore - 1)
        #expect(try db.openGrants(a.store) == 1)
        // A second token asked of A while B's runs: the rest after a bypass that B recorded holds on
        // A, so A refuses it, and no token is counted for it on either.
        var refusal: Refusal?
        do throws(EngineError) { _ = try await a.engine.token("reddit", profile: profile) } catch { refusal = error.refusal }
        #expect(refusal?.rule == .bypassLockout, "\(String(describing: refusal))")
        #expect(try db.openGrants(a.store) == 1)
        #expect(try await b.engine.status(profile: profile).credit.tokensLeftThisMonth == tokensBefore - 1)

        // A request made through A, approved through B: its credit is in the ledger once, and A's wallet shows it.
        let balanceBefore = try await a.engine.wallet(profile: profile).credit.balanceSeconds
        let ledgerBefore = try a.store.verifyLedger().first { $0.profile == profile }?.ledgerSumSeconds ?? 0
        let request = try await a.engine.requestTime(profile: profile, seconds: 900, note: "homework research")
        #expect(await SharedFixture.eventually { await b.engine.timeRequests(profile: profile).contains { $0.id == request.id } },
                "A's request never reached B")
        let answered = try await b.engine.answerTimeRequest(id: request.id, approve: true, answeredBy: "parent", note: "go ahead")
        #expect(answered.adjustment?.balanceSeconds == balanceBefore + 900, "\(answered)")
        #expect(await SharedFixture.eventually { (try? await a.engine.wallet(profile: profile).credit.balanceSeconds) == balanceBefore + 900 },
                "the approval's credit never reached A's wallet")
        #expect(await a.engine.timeRequests(profile: profile).first { $0.id == request.id }?.status == .approved)
        // Answered once: A, asked to approve it again, refuses, and the ledger holds the 900 s once.
        await #expect(throws: EngineError.self) {
            try await a.engine.answerTimeRequest(id: request.id, approve: true, answeredBy: "parent", note: nil)
        }
        #expect(try a.store.verifyLedger().first { $0.profile == profile }?.ledgerSumSeconds == ledgerBefore + 900)
        #expect(try db.query("SELECT count(*) FROM ledger WHERE delta_seconds = 900") == "1")
        #expect(try SharedFixture.invariantProblems(a.store).isEmpty)
    }
}
