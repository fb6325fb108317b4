@testable import Config
import Engine
import Foundation
@testable import Helper
import Testing

@Suite("etc/scrolloff.toml: the documented defaults are the embedded ones")
struct SampleFileTests {
    /// The sample with every `# key = value` line made active.
    static func uncommented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("# "), let first = line.dropFirst(2).first, first.isLetter, first.isLowercase,
                  line.contains(" = ")
            else { return String(line) }
            let rest = line.dropFirst(2)
            // Only `key = value` lines: a comment sentence never has a bare snake_case word before " = ".
            guard let key = rest.split(separator: " ").first, key.allSatisfy({ $0.isLowercase || $0 == "_" }),
                  rest.dropFirst(key.count).hasPrefix(" = ")
            else { return String(line) }
            return String(rest)
        }.joined(separator: "\n")
    }

    /// The indented examples (`#   [[profiles]]`, `#   name = "kids"`) made active.
    static func examplesActive(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let rest = line.dropFirst(4)
            guard line.hasPrefix("#   "), rest.first == "[" || rest.split(separator: " ").dropFirst().first == "=" else {
                return String(line)
            }
            return String(rest)
        }.joined(separator: "\n")
    }

    @Test func sample_as_shipped_parses_to_the_embedded_defaults() throws {
        let c = try parse(try sampleText())
        #expect(effective(c) == effective(try parse("")))
    }

    @Test func sample_with_every_key_uncommented_parses_to_the_embedded_defaults() throws {
        let text = Self.uncommented(try sampleText())
        // The test would prove nothing if the uncommenting did nothing.
        let active = text.split(separator: "\n").filter { $0.contains(" = ") && !$0.hasPrefix("#") }
        let tables = ["helper", "dns", "lists", "metrics", "firewall", "web", "digest", "notify", "store", "profile", "profile.knobs"]
        let documented = tables.flatMap { ConfigurationSchema.tables[$0] ?? [] }.filter { $0 != "source" && $0 != "knobs" }
        #expect(active.count == documented.count)
        let c = try parse(text)
        #expect(effective(c) == effective(try parse("")))
    }

    @Test func sample_documents_every_key_of_the_schema() throws {
        let text = Self.uncommented(try sampleText())
        let index = KeyLineIndex(text: text)
        let examples = KeyLineIndex(text: Self.examplesActive(try sampleText()))
        for (table, keys) in ConfigurationSchema.tables {
            for key in keys {
                let path = table.isEmpty ? key : "\(table).\(key)"
                // Arrays of tables are documented by their example: `profiles[1].name`.
                let itemPath = path.replacingOccurrences(of: "profiles.", with: "profiles[1].")
                    .replacingOccurrences(of: "lists.source.", with: "lists.source[1].")
                    .replacingOccurrences(of: "allowances.", with: "allowances[1].")
                let written = index.lines[path] != nil || examples.lines[itemPath] != nil
                    || examples.lines[path + "[1]"] != nil
                // A profile's knobs are those of [profile.knobs], which the sample lists one by one.
                let sameKnob = table == "profiles.knobs" && index.lines["profile.knobs.\(key)"] != nil
                #expect(written || sameKnob, "\(path) is not in etc/scrolloff.toml")
            }
        }
    }

    @Test func sample_examples_are_valid_configuration() throws {
        let c = try parse(Self.examplesActive(try sampleText()))
        #expect(c.listSources.map(\.name) == ["example"])
        #expect(c.profiles.map(\.name) == ["kids"])
        #expect(c.profiles.first?.clientCIDRs == ["192.168.1.64/26", "fd00:1::/64", "aa:bb:cc:dd:ee:ff"])
        #expect(c.profiles.first?.ownerUIDs == [1000])
        #expect(c.profiles.first?.memberUIDs == [1001])
        // One hour of YouTube on school days, Monday to Friday (index 0 = Sunday).
        #expect(c.allowances == [ConfiguredAllowance(profile: "default", entries: ["youtube"], secondsByWeekday: [0, 3600, 3600, 3600, 3600, 3600, 0])])
    }
}

@Suite("Key lines")
struct KeyLineIndexTests {
    static let text = """
        top = 1
        [dns]
        listen = [
          "127.0.0.1:53",
          "[::1]:53", # second
        ]
        note = \"\"\"
        fake = 1
        [fake]
        \"\"\"
        a.b = 'x'
        "quoted key" = 2
        [[profiles]]
        name = "one"
        [profiles.knobs]
        cooldown = "2h"
        [[profiles]]
        knobs = { cooldown = "1h", rollover_days = 1 }
        list = [ { name = "x" }, { name = "y" } ]
        """

    @Test(arguments: [
        ("top", 1), ("dns", 2), ("dns.listen", 3), ("dns.listen[1]", 4), ("dns.listen[2]", 5), ("dns.note", 7),
        ("dns.a.b", 11), ("dns.\"quoted key\"", 12), ("profiles[1]", 13), ("profiles[1].name", 14),
        ("profiles[1].knobs", 15), ("profiles[1].knobs.cooldown", 16), ("profiles[2]", 17),
        ("profiles[2].knobs.rollover_days", 18), ("profiles[2].list[2].name", 19),
    ])
    func line_of_path(path: String, line: Int) {
        #expect(KeyLineIndex(text: Self.text).line(of: path) == line)
    }

    @Test func text_inside_a_multiline_string_is_not_a_key() {
        let index = KeyLineIndex(text: Self.text)
        #expect(index.lines["fake"] == nil)
        #expect(index.lines["dns.fake"] == nil)
    }

    @Test func unwritten_key_falls_back_to_its_table() {
        #expect(KeyLineIndex(text: Self.text).line(of: "profiles[2].clients") == 17)
    }
}
