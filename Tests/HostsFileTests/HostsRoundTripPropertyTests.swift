import HostsFile
import PropertyBased
import Testing

/// Random hosts files survive a section being added, changed and removed byte for byte.
struct HostsRoundTripPropertyTests {
    /// Pieces a real hosts file is made of, line breaks included or not, odd bytes included.
    static let fragments: [[UInt8]] = [
        Array("127.0.0.1 localhost".utf8), Array("::1\tlocalhost ip6-localhost".utf8), Array("# a comment".utf8),
        Array("   ".utf8), Array("\t\t".utf8), Array("10.0.0.2    nas.lan nas  # trailing".utf8),
        Array("# BEGIN scrolloff? not a marker".utf8), Array("#END scrolloff".utf8),
        [0xFF, 0xFE, 0x00, 0x41], Array("caf\u{E9}.example 1.2.3.4".utf8), [0x0D], [],
    ]
    static let breaks: [[UInt8]] = [[0x0A], [0x0D, 0x0A], [0x0D, 0x0A], [0x0A]]
    static let names = ["instagram.com", "www.instagram.com", "tiktok.com", "x.com", "reddit.com", "use-application-dns.net"]

    static func file(_ lines: [Int], _ lineBreaks: [Int], finalBreak: Bool) -> [UInt8] {
        var out: [UInt8] = []
        for (i, f) in lines.enumerated() {
            out += fragments[f]
            if i < lines.count - 1 || finalBreak { out += breaks[lineBreaks[i % lineBreaks.count]] }
        }
        return out
    }

    @Test func random_files_round_trip_byte_for_byte_through_set_change_and_remove() async {
        await propertyCheck(
            count: 300,
            input: Gen.int(in: 0...(Self.fragments.count - 1)).array(of: 0...25), Gen.int(in: 0...3).array(of: 1...4), Gen.bool(),
            Gen.int(in: 0...(Self.names.count - 1)).array(of: 0...6), Gen.int(in: 0...(Self.names.count - 1)).array(of: 0...6)
        ) { lines, lineBreaks, finalBreak, first, second in
            let original = Self.file(lines, lineBreaks, finalBreak: finalBreak)
            guard let layout = try? HostsLayout(parsing: original) else {
                Issue.record("a file with no markers failed to parse")
                return
            }
            #expect(layout.section == nil)
            let withFirst = layout.replacingSection(with: HostsSection.render(names: first.map { Self.names[$0] }, lineBreak: layout.lineBreak))
            let withSecond = try? HostsLayout(parsing: withFirst).replacingSection(
                with: HostsSection.render(names: second.map { Self.names[$0] }, lineBreak: layout.lineBreak))
            guard let withSecond, let parsed = try? HostsLayout(parsing: withSecond) else {
                Issue.record("the file with a section written by Scroll Off failed to parse")
                return
            }
            // Outside the section nothing moved; removing it gives the original bytes back.
            #expect(Array(parsed.before) + Array(parsed.after) == original)
            #expect(parsed.removingSection() == original)
            // Deterministic: the same names give the same bytes in any order.
            let reversed = HostsSection.render(names: second.reversed().map { Self.names[$0] }, lineBreak: layout.lineBreak)
            #expect(Array(parsed.managed) == reversed)
        }
    }
}
