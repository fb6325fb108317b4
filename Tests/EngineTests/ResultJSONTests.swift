import ControlAPI
import ControlServer
import Foundation
import Helper
import Testing

/// The `--json` names SPEC §13 says scripts rely on, as the control API encodes them (`ControlJSON`).
@Suite("Result JSON names")
struct ResultJSONTests {
    static func keys(_ value: some Encodable) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: ControlJSON.encoder().encode(value))
        return Set((object as? [String: Any] ?? [:]).keys)
    }

    @Test func wallet_status_stats_and_plans_carry_the_spec_fields() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        _ = try await engine.addPlan(when: "I feel bored", then: "I will stretch")

        #expect(try Self.keys(await WalletReport(engine.wallet())).isSuperset(of: ["balance_seconds", "earned_today_seconds", "spent_today_seconds"]))
        let status = try await StatusReport(engine.status())
        #expect(try Self.keys(status).isSuperset(of: ["entries", "peeks_left_today", "tokens_left_month"]))
        let entry = try #require(status.entries.first)
        #expect(try Self.keys(entry).isSuperset(of: ["id", "state", "locked_until"]))
        #expect(try Self.keys(await engine.stats(.week)).isSuperset(of: [
            "urges", "urges_resisted", "protected_seconds", "spent_seconds", "earned_seconds", "streak_days",
        ]))
        time.pass(.hours(3)) // past the cooldown: nothing locked, and the field is still there
        let unlocked = try #require(try await StatusReport(engine.status()).entries.first)
        #expect(unlocked.lockedUntil == nil)
        #expect(try Self.keys(unlocked).contains("locked_until"))
        let plan = try #require(await engine.planList().first)
        #expect(try Self.keys(PlanReport(plan)).isSuperset(of: ["id", "when", "then"]))
    }
}
