import Helper
import Testing

/// Every key of the sample (examples included), given values of the wrong kind: each refusal must
/// point at the edited line, and no problem may come without a line.
@Suite("Every key rejects wrong values on its own line")
struct EveryKeyTests {
    static let wrongValues = ["\"x\"", "-1", "true", "[1]", "{ a = 1 }", "1.5", "\"999d\"", "1979-05-27"]

    @Test func wrong_value_for_any_key_is_reported_on_that_line() throws {
        let text = SampleFileTests.examplesActive(SampleFileTests.uncommented(try sampleText()))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var refused = 0, tried = 0
        for (i, line) in lines.enumerated() where !line.hasPrefix("#") && !line.hasPrefix("[") && line.contains(" = ") {
            guard let key = line.split(separator: " ").first else { continue }
            for value in Self.wrongValues {
                var edited = lines
                edited[i] = "\(key) = \(value)"
                tried += 1
                do {
                    _ = try parse(edited.joined(separator: "\n"))
                } catch {
                    refused += 1
                    let problems = error.problems
                    #expect(problems.allSatisfy { $0.line != nil }, "\(key) = \(value): \(problems)")
                    #expect(problems.contains { $0.line == i + 1 }, "\(key) = \(value) on line \(i + 1): \(problems)")
                    #expect(problems.allSatisfy { $0.allowed?.isEmpty == false || $0.key.isEmpty }, "\(problems)")
                }
            }
        }
        // Most of the ~50 keys × 8 values are wrong; the few accepted are values such as `true`
        // for a boolean or "x" for a list name.
        #expect(tried > 350)
        #expect(refused * 10 > tried * 9, "only \(refused) of \(tried) refused")
    }
}
