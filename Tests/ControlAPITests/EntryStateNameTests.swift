import ControlAPI
import Foundation
import ScrollOffCore
import Testing

/// `entries[].state` and `services[].state` are typed on both sides and cross as the same words.
struct EntryStateNameTests {
    @Test(arguments: EntryState.Kind.allCases)
    func each_kind_crosses_as_its_spec_13_word_and_back(kind: EntryState.Kind) throws {
        let state = EntryStateName(kind)
        let text = String(decoding: ControlJSON.encode([state]), as: UTF8.self)
        #expect(text == "[\"\(kind.name)\"]")
        #expect(try ControlJSON.decoder().decode([EntryStateName].self, from: Data(text.utf8)) == [state])
        #expect(state.kind == kind)
    }

    @Test func a_state_this_build_does_not_know_decodes_and_is_kept_as_it_came() throws {
        // A newer helper may add a state: the answer still decodes, and the word goes back out unchanged.
        let json = #"{"id":"reddit","state":"paused","locked_until":null,"next_state":"snoozed"}"#
        let entry = try ControlJSON.decoder().decode(EntryReport.self, from: Data(json.utf8))
        #expect(entry.state == .unknown("paused"))
        #expect(entry.nextState == .unknown("snoozed"))
        #expect(entry.state.kind == nil && !entry.state.isBlocking)
        let again = String(decoding: ControlJSON.encode(entry), as: UTF8.self)
        #expect(again.contains(#""state":"paused""#) && again.contains(#""next_state":"snoozed""#))
    }

    @Test func a_state_that_is_not_a_string_is_a_decoding_error() {
        let json = #"{"id":"reddit","state":3,"locked_until":null}"#
        #expect(throws: DecodingError.self) { try ControlJSON.decoder().decode(EntryReport.self, from: Data(json.utf8)) }
    }
}
