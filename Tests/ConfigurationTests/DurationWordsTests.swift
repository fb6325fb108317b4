import ScrollOffCore
import Testing

@Suite("Lengths of time in words")
struct DurationWordsTests {
    @Test(arguments: [
        ("2h", 7_200_000), ("90min", 5_400_000), ("30s", 30_000), ("1h30m", 5_400_000), ("1 h 30 min", 5_400_000),
        ("7d", 604_800_000), ("500ms", 500), ("0", 0), ("0s", 0), ("45m", 2_700_000), ("2H", 7_200_000),
        ("1d 2h 3min 4s 5ms", 93_784_005),
    ] as [(String, Int64)])
    func reads(text: String, milliseconds: Int64) {
        #expect(SpanWords.parse(text) == Span(milliseconds: milliseconds))
    }

    @Test(arguments: ["", "2", "h", "2x", "30s2h", "1h1h", "-5s", "1.5h", "2 hours", "99999999s", "1h 30"])
    func refuses(text: String) {
        #expect(SpanWords.parse(text) == nil)
    }

    @Test(arguments: [Span.seconds(40), .seconds(270), .seconds(4320), .hours(50), .minutes(45)])
    func what_describe_prints_reads_back(span: Span) {
        #expect(SpanWords.parse(SpanWords.describe(span)) == span)
    }
}
