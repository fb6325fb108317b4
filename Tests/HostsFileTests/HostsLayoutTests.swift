import HostsFile
import Testing

/// The split, render and splice of the managed section, byte for byte (SPEC §10).
struct HostsLayoutTests {
    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func file_without_section_has_everything_before_and_nothing_managed() throws {
        let file = Self.bytes("127.0.0.1 localhost\n::1 localhost\n")
        let layout = try HostsLayout(parsing: file)
        #expect(layout.section == nil)
        #expect(Array(layout.before) == file)
        #expect(layout.managed.isEmpty && layout.after.isEmpty)
        #expect(layout.lineBreak == .lf)
    }

    @Test(arguments: [
        // (file, expected before, managed, after)
        ("a\n# BEGIN scrolloff\n0.0.0.0 x.com\n# END scrolloff\nb\n", "a\n", "# BEGIN scrolloff\n0.0.0.0 x.com\n# END scrolloff\n", "b\n"),
        ("# BEGIN scrolloff\r\n# END scrolloff\r\nz", "", "# BEGIN scrolloff\r\n# END scrolloff\r\n", "z"),
        ("x\n# BEGIN scrolloff\n# END scrolloff", "x\n", "# BEGIN scrolloff\n# END scrolloff", ""),
        ("  # BEGIN scrolloff \t\n\t# END scrolloff\n", "", "  # BEGIN scrolloff \t\n\t# END scrolloff\n", ""),
    ])
    func section_boundaries_are_whole_marker_lines(file: String, before: String, managed: String, after: String) throws {
        let layout = try HostsLayout(parsing: Self.bytes(file))
        #expect(Array(layout.before) == Self.bytes(before))
        #expect(Array(layout.managed) == Self.bytes(managed))
        #expect(Array(layout.after) == Self.bytes(after))
    }

    @Test func comment_that_only_mentions_the_markers_is_the_users_line() throws {
        let file = Self.bytes("# BEGIN scrolloff section follows? no\n#BEGIN scrolloff\n# begin scrolloff\n1.2.3.4 a # END scrolloff\n")
        let layout = try HostsLayout(parsing: file)
        #expect(layout.section == nil)
    }

    @Test(arguments: [
        ("a\n# BEGIN scrolloff\nb\n", HostsFileError.Damage.beginWithoutEnd(begin: 2)),
        ("# BEGIN scrolloff\nx\n# BEGIN scrolloff\n# END scrolloff\n", .twoBegins(first: 1, second: 3)),
        ("a\nb\n# END scrolloff\n# BEGIN scrolloff\n# END scrolloff\n", .endWithoutBegin(end: 3)),
        ("# BEGIN scrolloff\n# END scrolloff\nx\n# BEGIN scrolloff\n# END scrolloff\n", .twoSections(secondBegin: 4)),
        ("# BEGIN scrolloff\r\n# END scrolloff\r\n# END scrolloff\r\n", .endWithoutBegin(end: 3)),
    ])
    func damaged_section_is_refused_with_its_line_numbers(file: String, damage: HostsFileError.Damage) {
        #expect(throws: HostsFileError.damagedSection(damage)) { try HostsLayout(parsing: Self.bytes(file)) }
        let message = HostsFileError.damagedSection(damage).description
        for line in damage.lines { #expect(message.contains("\(line)")) }
        #expect(message.contains("edit the file"))
    }

    @Test func render_writes_both_null_addresses_per_name_sorted_and_deduplicated() {
        let section = HostsSection.render(names: ["WWW.Instagram.com.", "instagram.com", "instagram.com", "a.example"])
        #expect(section == Self.bytes("""
            # BEGIN scrolloff
            # Managed by scrolloff-dns: edits here are replaced. `scrolloff-dns hosts remove` takes the section out.
            0.0.0.0 a.example
            :: a.example
            0.0.0.0 instagram.com
            :: instagram.com
            0.0.0.0 www.instagram.com
            :: www.instagram.com
            # END scrolloff

            """))
    }

    @Test func render_never_writes_canaries_or_names_a_hosts_line_cannot_hold() {
        let section = String(decoding: HostsSection.render(
            names: ["use-application-dns.net", "*.wild.com", "bad name.com", "x#y.com", "a..b", "ok.com"],
            excluding: ["use-application-dns.net"]), as: UTF8.self)
        #expect(!section.contains("use-application-dns"))
        #expect(!section.contains("wild") && !section.contains("bad") && !section.contains("x#y") && !section.contains("a..b"))
        #expect(section.contains("0.0.0.0 ok.com\n:: ok.com\n"))
    }

    @Test func render_of_nothing_blocked_is_no_section_at_all() {
        #expect(HostsSection.render(names: [String]()).isEmpty)
        #expect(HostsSection.render(names: ["resolver.arpa"], excluding: ["resolver.arpa"]).isEmpty)
    }

    @Test func render_in_crlf_uses_crlf_on_every_line() {
        let section = HostsSection.render(names: ["x.com"], lineBreak: .crlf)
        let text = String(decoding: section, as: UTF8.self)
        #expect(text.hasSuffix("# END scrolloff\r\n"))
        // Every LF byte follows a CR (Swift's String sees "\r\n" as one character, so count bytes).
        let lineFeeds = section.indices.filter { section[$0] == 0x0A }
        #expect(lineFeeds.count == 5 && lineFeeds.allSatisfy { $0 > 0 && section[$0 - 1] == 0x0D })
    }

    @Test func crlf_file_without_final_line_break_gets_the_section_on_top_and_back_exactly() throws {
        let file = Self.bytes("127.0.0.1\tlocalhost\r\n# my comment  \r\n10.0.0.1   nas")
        let layout = try HostsLayout(parsing: file)
        #expect(layout.lineBreak == .crlf)
        let spliced = layout.replacingSection(with: HostsSection.render(names: ["x.com"], lineBreak: layout.lineBreak))
        #expect(String(decoding: spliced, as: UTF8.self).hasPrefix("# BEGIN scrolloff\r\n"))
        #expect(spliced.suffix(file.count) == file[...])
        let again = try HostsLayout(parsing: spliced)
        #expect(again.removingSection() == file)
    }

    @Test func section_moved_by_hand_is_replaced_where_it_is() throws {
        let file = Self.bytes("a\n# BEGIN scrolloff\nold\n# END scrolloff\nb")
        let out = try HostsLayout(parsing: file).replacingSection(with: Self.bytes("# BEGIN scrolloff\nnew\n# END scrolloff\n"))
        #expect(out == Self.bytes("a\n# BEGIN scrolloff\nnew\n# END scrolloff\nb"))
    }
}
