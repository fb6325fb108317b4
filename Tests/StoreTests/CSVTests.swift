import Foundation
import ScrollOffCore
import Testing
@testable import Store

/// A strict RFC 4180 reader, to check what the exporter writes parses back to the same fields.
func parseCSV(_ text: String) -> [[String]] {
    var records: [[String]] = []
    var record: [String] = []
    var field = ""
    var quoted = false
    var chars = Array(text.unicodeScalars)[...]
    while let c = chars.popFirst() {
        if quoted {
            if c == "\"" {
                if chars.first == "\"" { field.unicodeScalars.append("\""); chars.removeFirst() } else { quoted = false }
            } else {
                field.unicodeScalars.append(c)
            }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            record.append(field); field = ""
        } else if c == "\r", chars.first == "\n" {
            chars.removeFirst()
            record.append(field); field = ""
            records.append(record); record = []
        } else {
            field.unicodeScalars.append(c)
        }
    }
    return records
}

@Suite struct CSVTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("a,b", "\"a,b\""),
        ("say \"hi\"", "\"say \"\"hi\"\"\""),
        ("two\nlines", "\"two\nlines\""),
        ("crlf\r\nend", "\"crlf\r\nend\""),
        ("", ""),
        ("ünïcode – ok", "ünïcode – ok"),
    ])
    func fields_are_quoted_per_rfc_4180(input: String, expected: String) {
        #expect(CSV.field(input) == expected)
    }

    @Test func export_round_trips_notes_with_commas_quotes_and_newlines() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let t = Fixture.start
        let notes = ["fixed, after \"the\" bug", "line one\nline two", "cr\r\nlf", "plain"]
        var change = StateChange()
        for (i, note) in notes.enumerated() {
            change.append(.appendLedger(profile: Fixture.profile,
                                        LedgerRow(time: t + .seconds(Int64(i)), deltaSeconds: Int64(i + 1), reason: .adjust, entry: "x", note: note)))
        }
        change.append(.appendEvent(StoredEvent(profile: Fixture.profile, time: t + .milliseconds(10_500), kind: .urge, entry: "instagram",
                                               clientIP: "192.168.1.7", message: "urge, \"quoted\"\nnext")))
        try store.commit(change, anchor: Fixture.anchor(t))

        let records = parseCSV(try store.exportCSV())
        #expect(records.first == Store.csvHeader)
        #expect(records.dropFirst().map { $0.last ?? "" } == notes + ["urge, \"quoted\"\nnext"])
        #expect(records.allSatisfy { $0.count == Store.csvHeader.count })
        #expect(records[1] == ["ledger", "1", "2026-11-18T11:06:40.000Z", String(t.millisecondsSince1970), "home", "adjust", "1", "x", "", notes[0]])
        #expect(records[5][0...4] == ["event", "1", "2026-11-18T11:06:50.500Z", String(t.millisecondsSince1970 + 10_500), "home"])

        let file = dir.path + "/export.csv"
        try store.exportCSV(to: file)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == (try store.exportCSV()))
        #expect(mode(of: file) == 0o600)
    }
}
