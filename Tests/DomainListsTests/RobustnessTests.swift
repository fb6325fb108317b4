import TestSupport
import Testing
@testable import DomainLists

/// Garbage in, no crash out: random bytes through the parser, the normalizer and both lookups.
struct RobustnessTests {
    @Test(arguments: [11, 12, 13] as [UInt64])
    func random_bytes_never_crash_the_parser_and_every_line_is_accounted_for(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        // Bytes biased toward the characters the formats care about.
        let alphabet = Array("ab.-_|^$@#!*/: \t\r\n0123456789ABZ".utf8) + [0x00, 0x7F, 0xC3, 0xA9, 0xEF, 0xBB, 0xBF, 0xFF]
        let bytes = (0..<20_000).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
        let options = ListParseOptions(budget: BadLineBudget(perThousandLines: 1000), allowEmpty: true)
        let parsed = try ListParser.parse(bytes, options: options)
        #expect(parsed.lineCount == physicalLines(bytes).count)
        // Whatever was kept is a valid, normalized name.
        for rule in parsed.rules {
            #expect(try DomainName(rule.name.text) == rule.name)
        }
    }

    @Test(arguments: [21, 22] as [UInt64])
    func random_names_never_crash_either_lookup(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let matcher = try matcher([("example.com", 1), ("*.b.example", 2), ("+ok.example.com", 0)])
        for _ in 0..<20_000 {
            let length = Int(random.next() % 300)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            // Random bytes spelling a name under example.com or b.example is beyond any chance.
            #expect(bytes.withUnsafeBytes { matcher.match(wire: $0) } == .noMatch)
            #expect(!bytes.withUnsafeBytes { matcher.match(text: $0) }.isBlocked)
        }
        // Wire names built from random label lengths, some past the buffer end.
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 6) {
                let length = Int(random.next() % 70)
                bytes.append(UInt8(length))
                bytes.append(contentsOf: (0..<Int(random.next() % 70)).map { _ in UInt8(ascii: "a") })
            }
            if random.next() % 2 == 0 { bytes.append(0) }
            #expect(bytes.withUnsafeBytes { matcher.match(wire: $0) } == .noMatch)
        }
    }
}
