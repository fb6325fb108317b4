import ControlAPI
import Foundation
import ScrollOffCore
import Testing

/// Instants on the wire are RFC 3339 timestamps, and an optional one is written as null rather
/// than left out (SPEC §13: `locked_until` must exist).
struct WireTimeTests {
    static let noon = Instant(secondsSince1970: 1_795_003_200) // 2026-11-18T12:00:00Z

    @Test func locked_until_is_a_timestamp_or_an_explicit_null() throws {
        let locked = EntryReport(id: "instagram", state: "blocked", lockedUntil: Self.noon, reason: nil, nextChange: nil, openUntil: nil)
        let text = String(decoding: ControlJSON.encode(locked), as: UTF8.self)
        #expect(text.contains(#""locked_until":"2026-11-18T12:00:00Z""#), "\(text)")
        var open = locked
        open.lockedUntil = nil
        let unlocked = String(decoding: ControlJSON.encode(open), as: UTF8.self)
        #expect(unlocked.contains(#""locked_until":null"#), "\(unlocked)")
        #expect(try ControlJSON.decoder().decode(EntryReport.self, from: Data(text.utf8)) == locked)
        #expect(try ControlJSON.decoder().decode(EntryReport.self, from: Data(unlocked.utf8)) == open)
    }

    @Test func a_missing_optional_time_decodes_as_nil() throws {
        let json = #"{"id":"x","state":"open"}"#
        let entry = try ControlJSON.decoder().decode(EntryReport.self, from: Data(json.utf8))
        #expect(entry.lockedUntil == nil && entry.openUntil == nil)
    }

    @Test func a_refusal_round_trips_with_rule_reason_subject_and_now() throws {
        let refusal = ControlError(code: "refused", message: "m", rule: "cooldown", opensAt: Self.noon.date, reason: "sleep", subject: "instagram")
        let data = ControlJSON.encode(ControlErrorEnvelope(error: refusal))
        #expect(try ControlJSON.decoder().decode(ControlErrorEnvelope.self, from: data).error == refusal)
    }
}
