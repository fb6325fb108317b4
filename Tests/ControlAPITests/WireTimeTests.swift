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

    @Test(arguments: [
        (0, "2026-11-18T12:00:00Z"), (1, "2026-11-18T12:00:01Z"), (999, "2026-11-18T12:00:01Z"),
        (1000, "2026-11-18T12:00:01Z"), (1001, "2026-11-18T12:00:02Z"),
    ] as [(Int64, String)])
    func opens_at_is_rounded_up_to_the_whole_second(_ extraMilliseconds: Int64, _ wire: String) throws {
        let opensAt = Instant(millisecondsSince1970: Self.noon.millisecondsSince1970 + extraMilliseconds)
        let refusal = ControlError(code: "refused", message: "m", rule: "bypass_lockout", opensAt: opensAt.date, subject: "instagram")
        let text = String(decoding: ControlJSON.encode(ControlErrorEnvelope(error: refusal)), as: UTF8.self)
        #expect(text.contains(#""opens_at":"\#(wire)""#), "\(text)")
        // A script retrying at the instant it read is never early.
        let read = try ControlJSON.decoder().decode(ControlErrorEnvelope.self, from: Data(text.utf8)).error.opensAt
        let retryAt = try #require(read.map(Instant.init(date:)))
        #expect(retryAt >= opensAt && retryAt - opensAt < .seconds(1))
    }

    @Test func locked_until_with_milliseconds_is_never_written_early() throws {
        let locked = Instant(millisecondsSince1970: Self.noon.millisecondsSince1970 + 250)
        let entry = EntryReport(id: "instagram", state: "blocked", lockedUntil: locked, reason: nil, nextChange: nil, openUntil: nil)
        let text = String(decoding: ControlJSON.encode(entry), as: UTF8.self)
        #expect(text.contains(#""locked_until":"2026-11-18T12:00:01Z""#), "\(text)")
    }

    @Test func fractional_seconds_from_other_clients_decode_to_the_millisecond() throws {
        let json = #"{"id":"x","state":"blocked","locked_until":"2026-11-18T12:00:00.250Z"}"#
        let entry = try ControlJSON.decoder().decode(EntryReport.self, from: Data(json.utf8))
        #expect(entry.lockedUntil == Instant(millisecondsSince1970: Self.noon.millisecondsSince1970 + 250))
    }

    @Test func a_timestamp_that_is_not_rfc_3339_is_refused_with_the_expected_shape() {
        let json = #"{"id":"x","state":"blocked","locked_until":"tomorrow"}"#
        #expect(throws: DecodingError.self) { try ControlJSON.decoder().decode(EntryReport.self, from: Data(json.utf8)) }
    }

    /// The CLI measures "until" against the helper's clock: answers that feed such lines carry the
    /// helper's `now`, and an answer from a helper that leaves it out still decodes (nil).
    @Test func answers_carry_the_helpers_now_and_decode_without_it() throws {
        let block = BlockResult(entries: [], message: "Blocked x.", now: Self.noon)
        let wallet = WalletReport(profile: "default", balanceSeconds: 0, earnedTodaySeconds: 0, spentTodaySeconds: 0, batches: [],
                                  nextAwardAt: nil, earningFrozenUntil: nil, grants: [], now: Self.noon)
        let schedules = SchedulesResponse(schedules: [], now: Self.noon)
        let events = EventsResponse(events: [], now: Self.noon)
        for text in [ControlJSON.encode(block), ControlJSON.encode(wallet), ControlJSON.encode(schedules), ControlJSON.encode(events)]
            .map({ String(decoding: $0, as: UTF8.self) }) {
            #expect(text.contains(#""now":"2026-11-18T12:00:00Z""#), "\(text)")
        }
        #expect(try ControlJSON.decoder().decode(BlockResult.self, from: ControlJSON.encode(block)).now == Self.noon)
        #expect(try ControlJSON.decoder().decode(WalletReport.self, from: ControlJSON.encode(wallet)).now == Self.noon)
        #expect(try ControlJSON.decoder().decode(SchedulesResponse.self, from: ControlJSON.encode(schedules)).now == Self.noon)
        #expect(try ControlJSON.decoder().decode(EventsResponse.self, from: ControlJSON.encode(events)).now == Self.noon)
        let old = try ControlJSON.decoder().decode(EventsResponse.self, from: Data(#"{"events":[]}"#.utf8))
        #expect(old.now == nil)
    }
}
