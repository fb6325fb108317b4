import ControlAPI
import Foundation
import ScrollOffCore
import Testing

/// The bounded values of the control API: each length of time, id and time from a
/// request is refused outside its range with the range and what was sent, at min-1 and max+1, and
/// taken at min and max.
@Suite struct WireBoundsTests {
    /// Lowest and highest allowed, per kind, written out here rather than read from the types.
    static let edges: [(name: String, lowest: Int64, highest: Int64, check: @Sendable (Int64) -> Bool)] = [
        ("adjustment", -86_400, 86_400, { (try? AdjustmentSeconds($0)) != nil }),
        ("request for time", 60, 86_400, { (try? RequestedSeconds($0)) != nil }),
        ("spend limit", 1, 86_400, { (try? SpendLimitSeconds($0)) != nil }),
        ("focus", 1, 604_800, { (try? FocusSeconds($0)) != nil }),
        ("pause", 1, 604_800, { (try? PauseSeconds($0)) != nil }),
        ("daily allowance", 1, 86_400, { (try? AllowanceSeconds($0)) != nil }),
    ]

    @Test(arguments: edges.indices)
    func each_length_of_time_takes_its_edges_and_refuses_one_past_them(_ index: Int) {
        let kind = Self.edges[index]
        #expect(!kind.check(kind.lowest - 1), "\(kind.name) took \(kind.lowest - 1)")
        #expect(kind.check(kind.lowest), "\(kind.name) refused \(kind.lowest)")
        #expect(kind.check(kind.highest), "\(kind.name) refused \(kind.highest)")
        #expect(!kind.check(kind.highest + 1), "\(kind.name) took \(kind.highest + 1)")
        #expect(!kind.check(.min) && !kind.check(.max) && !kind.check(.max / 1000), "\(kind.name)")
    }

    @Test func an_adjustment_of_zero_is_refused_and_one_second_either_way_is_taken() throws {
        #expect(throws: WireRangeError.self) { try AdjustmentSeconds(0) }
        #expect(try AdjustmentSeconds(-1).seconds == -1)
        #expect(try AdjustmentSeconds(1).seconds == 1)
    }

    @Test func the_refusal_names_the_field_the_range_and_what_was_sent() {
        do throws(WireRangeError) {
            _ = try AdjustmentSeconds(.min)
            Issue.record("Int64.min was taken")
        } catch {
            #expect(error.description.hasPrefix("seconds must be a whole number of seconds between -86400 and 86400 (a day either way), not 0; "
                + "you sent -9223372036854775808."), "\(error)")
        }
    }

    /// The request that took the helper down, decoded as the helper decodes it.
    @Test func the_adjustment_that_crashed_the_helper_is_refused_while_decoding() {
        let body = Array(#"{"seconds": -9223372036854775808, "note": "x"}"#.utf8)
        #expect(throws: ControlBodyError.outOfRange(WireRangeError(
            field: "seconds", allowed: AdjustmentBounds.allowed, sent: "-9223372036854775808", hint: AdjustmentBounds.hint))) {
            try ControlBodyDecoding.decode(AdjustRequest.self, from: body)
        }
    }

    /// Every value that is not a whole Int64 in range gets the same refusal, saying what it was.
    @Test(arguments: [
        ("9223372036854775807", "9223372036854775807"), ("9223372036854775", "9223372036854775"),
        ("9223372036854775808", "9223372036854775808"), ("1e308", "1e+308"), ("-1e308", "-1e+308"), ("2.5", "2.5"),
        ("0", "0"), ("\"900\"", "the string \"900\""), ("true", "true"), ("[]", "a list or an object"), ("{}", "a list or an object"),
    ])
    func a_for_seconds_that_is_not_a_whole_number_in_range_is_refused_saying_what_it_was(_ json: String, _ sent: String) {
        let body = Array(#"{"entry": "instagram", "for_seconds": \#(json)}"#.utf8)
        do throws(ControlBodyError) {
            let decoded = try ControlBodyDecoding.decode(GrantRequest.self, from: body)
            Issue.record("\(json) decoded as \(decoded)")
        } catch {
            guard case .outOfRange(let range) = error else {
                Issue.record("\(json): \(error)")
                return
            }
            #expect(range.field == "for_seconds" && range.sent == sent, "\(range)")
            #expect(range.description.contains("between 1 and 86400"), "\(range)")
        }
    }

    @Test func a_null_or_missing_for_seconds_means_until_stopped_and_a_day_is_taken() throws {
        #expect(try ControlBodyDecoding.decode(GrantRequest.self, from: Array(#"{"entry": "x", "for_seconds": null}"#.utf8)).forSeconds == nil)
        #expect(try ControlBodyDecoding.decode(GrantRequest.self, from: Array(#"{"entry": "x"}"#.utf8)).forSeconds == nil)
        #expect(try ControlBodyDecoding.decode(GrantRequest.self, from: Array(#"{"entry": "x", "for_seconds": 86400}"#.utf8)).forSeconds?.seconds == 86_400)
    }

    @Test func a_required_seconds_sent_as_null_is_refused_with_the_range() {
        #expect(throws: ControlBodyError.outOfRange(WireRangeError(
            field: "seconds", allowed: TimeRequestBounds.allowed, sent: "null", hint: TimeRequestBounds.hint))) {
            try ControlBodyDecoding.decode(TimeRequestBody.self, from: Array(#"{"seconds": null, "note": "x"}"#.utf8))
        }
    }

    @Test func a_bounded_value_encodes_as_a_plain_number_and_decodes_back() throws {
        let request = AdjustRequest(seconds: try AdjustmentSeconds(-600), note: "late")
        let encoded = ControlJSON.encode(request)
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"note":"late","seconds":-600}"#)
        #expect(try ControlBodyDecoding.decode(AdjustRequest.self, from: [UInt8](encoded)) == request)
    }

    @Test(arguments: [("1440", true), ("1441", false), ("1", true), ("0", false), ("-5", false), ("+5", false), (" 5", false),
                      ("999999999999999999", false), ("99999999999999999999", false), ("", false), ("1e3", false), ("٣", false)])
    func a_pages_minutes_are_bounded_before_they_are_multiplied(_ text: String, _ taken: Bool) {
        let value = try? AdjustmentSeconds(minutes: text)
        #expect((value != nil) == taken, "\(text)")
        if let value { #expect(value.seconds == Int64(text)! * 60) }
        #expect((try? AdjustmentSeconds(minutes: text, negative: true))?.seconds == value.map { -$0.seconds })
    }

    /// Found by ControlAPIFuzz: an empty minutes field was refused with "you sent ." — say so.
    @Test func an_empty_minutes_field_is_refused_saying_nothing_was_sent() {
        #expect(throws: WireRangeError(field: "minutes", allowed: "a whole number of minutes between 1 and 1440", sent: "nothing")) {
            try RequestedSeconds(minutes: "")
        }
    }

    @Test func focus_minutes_go_to_seven_days() {
        #expect((try? FocusSeconds(minutes: "10080"))?.seconds == 604_800)
        #expect((try? FocusSeconds(minutes: "10081")) == nil)
    }

    @Test(arguments: [("1", 1), ("9223372036854775807", .max), ("0", nil), ("-1", nil), ("9223372036854775808", nil),
                      ("", nil), ("+1", nil), ("1e3", nil), ("0x10", nil), ("1 ", nil)] as [(String, Int64?)])
    func an_id_is_a_whole_number_from_one(_ text: String, _ expected: Int64?) {
        #expect((try? WireID.parse(text, what: "a plan id", listing: "`scrolloff plan list`")) == expected, "\(text)")
    }

    @Test func a_refused_id_says_the_range_and_where_ids_are_listed() {
        #expect(throws: WireRangeError(field: "a plan id", allowed: "a whole number between 1 and 9223372036854775807", sent: "-5",
                                       hint: "`scrolloff plan list` shows the ids.")) {
            try WireID.parse("-5", what: "a plan id", listing: "`scrolloff plan list`")
        }
    }

    @Test(arguments: [("1970-01-01T00:00:00Z", true), ("1969-12-31T23:59:59Z", false), ("9999-12-31T23:59:59Z", true),
                      ("10000-01-01T00:00:00Z", false), ("2026-11-21T18:00:00Z", true), ("2026-11-21T18:00:00.250Z", true),
                      ("2026-11-21T19:00:00+01:00", true), ("soon", false), ("9223372036854775807", false)])
    func since_is_a_time_between_1970_and_9999(_ text: String, _ taken: Bool) {
        let parsed = try? WireTimeQuery.parse(text, field: "since")
        #expect((parsed != nil) == taken, "\(text)")
        if text == "2026-11-21T19:00:00+01:00" { #expect(parsed == Instant(secondsSince1970: 1_795_284_000)) }
    }

    /// Foundation's parsers roll a field past its range over into the next (Feb 30 → Mar 2, 25:00 →
    /// the next day's 01:00): such a time is refused, a leap day and a leap second are not.
    @Test(arguments: [("2026-02-30T00:00:00Z", false), ("2026-02-29T00:00:00Z", false), ("2024-02-29T00:00:00Z", true),
                      ("2100-02-29T00:00:00Z", false), ("2000-02-29T00:00:00Z", true), ("2026-04-31T00:00:00+02:00", false),
                      ("2026-01-01T25:00:00Z", false), ("2026-01-01T24:00:00Z", false), ("2026-01-01T10:61:00Z", false),
                      ("2026-12-31T23:59:60Z", true), ("2026-01-01T10:00:61Z", false), ("2026-01-01T10:00:00+24:00", false),
                      ("2026-01-01T10:00:00.Z", false), ("2026-00-10T10:00:00Z", false), ("2026-01-00T10:00:00Z", false),
                      ("2026-01-31T10:00:00.123456-07:30", true), ("2026-1-31T10:00:00Z", false), ("2026-01-31T10:00:00", false)])
    func a_time_outside_the_calendar_is_refused_not_rolled_over(_ text: String, _ taken: Bool) {
        #expect(((try? WireTimeQuery.parse(text, field: "since")) != nil) == taken, "\(text)")
        #expect((ControlJSON.date(fromWire: text) != nil) == taken, "\(text) in a body")
    }

    @Test func an_empty_or_missing_since_is_no_bound() throws {
        #expect(try WireTimeQuery.parse(nil, field: "since") == nil)
        #expect(try WireTimeQuery.parse("", field: "since") == nil)
    }

    @Test func a_long_value_is_quoted_back_shortened() {
        let long = String(repeating: "9", count: 100_000)
        do throws(WireRangeError) {
            _ = try WireID.parse(long, what: "a request id", listing: "`scrolloff requests`")
            Issue.record("a 100000-digit id was taken")
        } catch {
            #expect(error.description.count < 300, "\(error.description.count) characters")
            #expect(error.sent.hasSuffix("… (100000 bytes)"), "\(error.sent)")
        }
    }

    @Test func a_form_or_query_keeps_the_first_of_a_repeated_name_and_decodes_plus_and_percent() {
        let fields = URLEncodedFields.parse("note=late+to%20bed&minutes=5&minutes=999999&empty&=x&%ZZ=1")
        #expect(fields["note"] == "late to bed")
        #expect(fields["minutes"] == "5")
        #expect(fields["empty"] == "")
        #expect(fields[""] == "x")
        #expect(fields["%ZZ"] == "1")
    }

    /// The route table says which endpoints take a body, so the fuzz target and the end-to-end
    /// test go over every one of them.
    @Test func the_route_table_gives_each_endpoints_body_type() {
        #expect(ControlEndpoints.adjust.bodyType.map(ObjectIdentifier.init) == ObjectIdentifier(AdjustRequest.self))
        #expect(ControlEndpoints.status.bodyType == nil)
        let withBodies = ControlEndpoints.endpoints.filter { $0.bodyType != nil }.map(\.template)
        #expect(withBodies.contains("/v1/use") && withBodies.contains("/v1/requests/{id}/approve") && !withBodies.contains("/v1/health"))
    }

    // MARK: Text

    static func refusal<Body: ControlRequestBody>(_ type: Body.Type, _ json: String) -> WireRangeError? {
        do throws(ControlBodyError) {
            _ = try ControlBodyDecoding.decode(type, from: Array(json.utf8))
            return nil
        } catch {
            guard case .outOfRange(let range) = error else { return WireRangeError(field: "?", allowed: "?", sent: "\(error)") }
            return range
        }
    }

    @Test func a_reason_of_280_characters_is_taken_and_281_refused_saying_the_bound() {
        let most = String(repeating: "é", count: 280)
        #expect(Self.refusal(EntriesRequest.self, #"{"entries": ["x"], "reason": "\#(most)"}"#) == nil, "280 characters of 2 bytes each")
        let refused = Self.refusal(EntriesRequest.self, #"{"entries": ["x"], "reason": "\#(most)e"}"#)
        #expect(refused?.field == "reason" && refused?.description.hasPrefix("reason must be at most 280 characters; you sent 281 characters.") == true,
                "\(String(describing: refused))")
    }

    @Test(arguments: ["note", "text"])
    func a_megabyte_of_words_is_refused_whatever_the_endpoint(_ field: String) {
        let huge = String(repeating: "a", count: 1 << 20)
        let refused = field == "note"
            ? Self.refusal(TimeRequestBody.self, #"{"seconds": 900, "note": "\#(huge)"}"#)
            : Self.refusal(AlternativeRequest.self, #"{"text": "\#(huge)"}"#)
        #expect(refused?.field == field && refused?.sent == "1048576 characters", "\(String(describing: refused))")
    }

    @Test(arguments: [#"\n"#, #"\r"#, #"\t"#, #"\u0000"#, #"\u001b[31m"#, #"\u0085"#])
    func a_control_character_in_any_text_is_refused(_ escaped: String) {
        let inWords = Self.refusal(TimeRequestBody.self, #"{"seconds": 900, "note": "ok\#(escaped)forged"}"#)
        #expect(inWords?.field == "note" && inWords?.allowed.contains("without control characters") == true, "\(String(describing: inWords))")
        let inList = Self.refusal(EntriesRequest.self, #"{"entries": ["instagram", "x\#(escaped)"]}"#)
        #expect(inList?.field == "entries", "\(String(describing: inList))")
    }

    @Test func any_other_text_stops_at_2048_bytes_and_a_list_at_1000_items() {
        let url = "https://example.org/" + String(repeating: "a", count: 2048 - 20)
        #expect(Self.refusal(EntriesRequest.self, #"{"entries": ["\#(url)"]}"#) == nil)
        #expect(Self.refusal(EntriesRequest.self, #"{"entries": ["\#(url)a"]}"#)?.sent == "2049 bytes")
        let thousand = Array(repeating: #""x""#, count: 1000).joined(separator: ",")
        #expect(Self.refusal(EntriesRequest.self, #"{"entries": [\#(thousand)]}"#) == nil)
        #expect(Self.refusal(EntriesRequest.self, #"{"entries": [\#(thousand),"y"]}"#)?.sent == "1001 items")
    }
}
