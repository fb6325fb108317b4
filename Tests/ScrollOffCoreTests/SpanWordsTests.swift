import Testing
@testable import ScrollOffCore

/// The one span formatter: two units at most, the rest rounded the way the caller says.
struct SpanWordsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let span: Span
        let down: String
        let up: String
        var testDescription: String { "\(span.milliseconds) ms" }
    }

    static let table: [Case] = [
        Case(span: .zero, down: "0 s", up: "0 s"),
        Case(span: Span(milliseconds: 400), down: "0 s", up: "1 s"),
        Case(span: .seconds(45), down: "45 s", up: "45 s"),
        Case(span: Span(milliseconds: 59_001), down: "59 s", up: "1 min"),
        Case(span: .seconds(270), down: "4 min 30 s", up: "4 min 30 s"),
        Case(span: .minutes(45), down: "45 min", up: "45 min"),
        Case(span: Span(milliseconds: 3_599_500), down: "59 min 59 s", up: "1 h"),
        Case(span: .seconds(4330), down: "1 h 12 min", up: "1 h 13 min"),
        Case(span: .seconds(4320), down: "1 h 12 min", up: "1 h 12 min"),
        Case(span: .hours(2), down: "2 h", up: "2 h"),
        Case(span: .seconds(47 * 3600 + 59 * 60 + 30), down: "47 h 59 min", up: "2 d"),
        Case(span: .hours(300), down: "12 d 12 h", up: "12 d 12 h"),
        Case(span: .hours(300) + .seconds(1), down: "12 d 12 h", up: "12 d 13 h"),
        Case(span: .seconds(-90), down: "-1 min 30 s", up: "-1 min 30 s"),
    ]

    @Test(arguments: table)
    func lengths_used_round_down_and_waits_round_up(_ c: Case) {
        #expect(SpanWords.describe(c.span, rounding: .down) == c.down)
        #expect(SpanWords.describe(c.span, rounding: .up) == c.up)
    }

    @Test(arguments: [(40, "40 s"), (270, "4 min 30 s"), (4332, "1 h 12 min"), (259_200, "3 d")] as [(Int64, String)])
    func whole_seconds_read_the_same_as_spans(_ seconds: Int64, _ words: String) {
        #expect(SpanWords.describe(seconds: seconds) == words)
        #expect(SpanWords.describe(.seconds(seconds)) == words)
    }

    @Test func a_wait_rounded_up_never_reads_shorter_than_the_truth() {
        for ms in stride(from: Int64(0), through: 200_000_000, by: 7_777) {
            let words = SpanWords.describe(Span(milliseconds: ms), rounding: .up)
            #expect(Self.seconds(of: words) * 1000 >= ms, "\(ms) ms read as \(words)")
            let used = SpanWords.describe(Span(milliseconds: ms), rounding: .down)
            #expect(Self.seconds(of: used) * 1000 <= ms, "\(ms) ms read as \(used)")
        }
    }

    /// Reads the words back, an oracle independent of the formatter's arithmetic.
    static func seconds(of words: String) -> Int64 {
        let parts = words.split(separator: " ")
        var total: Int64 = 0
        for i in stride(from: 0, to: parts.count - 1, by: 2) {
            let n = Int64(parts[i]) ?? 0
            let unit: Int64 = switch parts[i + 1] { case "d": 86_400; case "h": 3600; case "min": 60; default: 1 }
            total += n * unit
        }
        return total
    }
}
