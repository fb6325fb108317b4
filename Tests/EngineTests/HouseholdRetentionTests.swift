import ControlAPI
@testable import Engine
@testable import Helper
import ControlServer
import ScrollOffCore
import Store
import Testing

/// The household's tables do not grow without bound (SPEC §9a): a request nobody answers expires
/// after `pendingRequestLifetime`, answered requests go after the events' 90 days (SPEC §12);
/// exercise outcomes stay, for the lifetime figures (SPEC §12).
@Suite("Engine: requests for time expire and are purged")
struct HouseholdRetentionTests {
    @Test func a_request_nobody_answers_expires_after_24_hours_as_declined_by_the_helper() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        let asked = try await engine.requestTime(profile: "default", seconds: 900, note: "homework")
        // The timer wakes for it: the expiry is among the due instants.
        #expect(try #require(await engine.nextDueInstant()) <= Fixture.noon + HelperEngine.pendingRequestLifetime)
        time.pass(.hours(23))
        try await engine.tick()
        #expect(await engine.timeRequests(profile: "default").first?.status == .pending)
        time.pass(.hours(1))
        try await engine.tick()
        let expired = try #require(await engine.timeRequests(profile: "default").first)
        #expect(expired.id == asked.id && expired.status == .declined)
        #expect(expired.answeredBy == HelperEngine.requestExpiryAuthor)
        #expect(expired.answerNote?.contains("No owner answered within 24 h") == true)
        // It is answered for good: an owner's late approval is refused and grants nothing.
        await #expect(throws: EngineError.self) {
            try await engine.answerTimeRequest(id: asked.id, approve: true, answeredBy: "parent", note: nil)
        }
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 120)
        let events = try await engine.events(since: nil, profile: "default").map(EventReport.init)
        #expect(events.contains { $0.message?.contains("expired") == true }, "\(events.map(\.message))")
    }

    @Test func expired_requests_free_their_slots_so_the_member_can_ask_again() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        for n in 0..<HelperEngine.pendingRequestsPerProfile {
            _ = try await engine.requestTime(profile: "default", seconds: 60, note: "ask \(n)")
        }
        await #expect(throws: EngineError.self) { try await engine.requestTime(profile: "default", seconds: 60, note: "one more") }
        // A day later, before the timer got to them: asking expires them first.
        time.pass(.hours(24))
        let again = try await engine.requestTime(profile: "default", seconds: 60, note: "one more")
        #expect(again.status == .pending)
        #expect(await engine.timeRequests(profile: "default").filter { $0.status == .pending }.count == 1)
    }

    @Test func answered_requests_go_after_90_days_and_exercise_outcomes_stay_for_the_lifetime_figures() async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon)
        do {
            let engine = try await Fixture.start(dir, time)
            let old = try await engine.requestTime(profile: "default", seconds: 600, note: "old")
            _ = try await engine.answerTimeRequest(id: old.id, approve: false, answeredBy: "parent", note: nil)
            try await engine.recordExercise("breath", entry: "instagram", outcome: .completed, profile: "default")
            time.pass(.hours(24 * 80))
            let recent = try await engine.requestTime(profile: "default", seconds: 600, note: "recent")
            _ = try await engine.answerTimeRequest(id: recent.id, approve: true, answeredBy: "parent", note: nil)
            try await engine.recordExercise("breath", entry: "instagram", outcome: .skipped, profile: "default")
        }
        // 91 days after the first: the start's retention run takes the old ones, keeps the recent.
        time.pass(.hours(24 * 11))
        let engine = try await Fixture.start(dir, time)
        #expect(await engine.timeRequests(profile: nil).map(\.note) == ["recent"])
        let store = await engine.sqliteStore
        let stored = try store.load().timeRequests
        #expect(stored.map(\.note) == ["recent"])
        #expect(try store.exercises(profile: "default").map(\.outcome) == [.completed, .skipped])
        // The purge leaves the books whole: the approval's credit is still in the balance.
        #expect(try await WalletReport(engine.wallet()).balanceSeconds >= 600)
    }
}
