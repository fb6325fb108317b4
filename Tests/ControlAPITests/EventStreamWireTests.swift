import ControlAPI
import Testing

/// The event stream's wire (SPEC §12): Server-Sent Events as the HTML standard reads them, and the
/// id a reader resumes from.
@Suite struct EventStreamWireTests {
    @Test func server_sent_events_parse_the_same_whatever_pieces_they_arrive_in() {
        let text = "retry: 2000\n: scrolloff-dns events\n\nid: 7\n\n: live\n\nid: 8\ndata: {\"a\":1}\n\n"
            + "id: 9\r\ndata: line one\r\ndata: line two\r\n\r\nevent: dropped\ndata: {\"last_id\":9}\n\n"
        let bytes = Array(text.utf8)
        var whole = ServerSentEventParser()
        let expected = whole.feed(bytes)
        #expect(expected == [
            ServerSentEvent(id: "8", event: "message", data: "{\"a\":1}"),
            ServerSentEvent(id: "9", event: "message", data: "line one\nline two"),
            // The id is the stream's cursor and stays with the messages after it (HTML's last event ID buffer).
            ServerSentEvent(id: "9", event: "dropped", data: "{\"last_id\":9}"),
        ])
        #expect(whole.comments == 2 && whole.lastEventID == "9")
        for cut in 1..<bytes.count {
            var parser = ServerSentEventParser()
            let got = parser.feed(bytes[..<cut]) + parser.feed(bytes[cut...])
            #expect(got == expected, "cut at \(cut)")
        }
        // An id with no data moves the cursor without a message (a new reader's starting point).
        var cursor = ServerSentEventParser()
        #expect(cursor.feed(Array("id: 41\n\n".utf8)).isEmpty && cursor.lastEventID == "41")
    }

    @Test func a_resume_id_is_a_whole_number_from_the_query_or_else_the_header() throws {
        #expect(try EventStream.resumeID(query: nil, header: nil) == nil)
        #expect(try EventStream.resumeID(query: "12", header: "99") == 12)
        #expect(try EventStream.resumeID(query: "", header: " 99 ") == 99)
        #expect(try EventStream.resumeID(query: "0", header: nil) == 0)
        for bad in ["-1", "1e3", "abc", "+1", "9223372036854775808", "12 ", String(repeating: "9", count: 300)] {
            #expect(throws: WireRangeError.self, "\(bad)") { try EventStream.resumeID(query: bad, header: nil) }
        }
        do {
            _ = try EventStream.resumeID(query: nil, header: "soon")
            Issue.record("a header that is not an id must be refused")
        } catch {
            #expect(error.description.contains("Last-Event-ID") && error.description.contains("between 0 and 9223372036854775807"), "\(error)")
        }
    }

    @Test func a_message_with_several_lines_of_data_survives_the_round_trip() {
        let text = EventStream.message(id: 5, event: nil, data: "one\ntwo") + EventStream.comment("heartbeat")
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array(text.utf8)) == [ServerSentEvent(id: "5", event: "message", data: "one\ntwo")])
    }
}
