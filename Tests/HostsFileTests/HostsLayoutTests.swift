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

    /// SPEC §10: glibc without `multi on` answers from the first line naming a host, so a section
    /// someone moved below their own `1.2.3.4 instagram.com` would lose to it. It goes back to the
    /// top; the lines outside keep their bytes and their order.
    @Test func section_moved_down_by_hand_goes_back_to_the_top_with_the_users_lines_in_order() throws {
        let file = Self.bytes("a\n1.2.3.4 instagram.com\n# BEGIN scrolloff\nold\n# END scrolloff\nb")
        let layout = try HostsLayout(parsing: file)
        #expect(!layout.sectionIsFirst)
        let section = Self.bytes("# BEGIN scrolloff\nnew\n# END scrolloff\n")
        #expect(!layout.alreadyHolds(section))
        let out = layout.replacingSection(with: section)
        #expect(out == Self.bytes("# BEGIN scrolloff\nnew\n# END scrolloff\na\n1.2.3.4 instagram.com\nb"))
        #expect(try HostsLayout(parsing: out).alreadyHolds(section))
        #expect(try HostsLayout(parsing: out).removingSection() == Self.bytes("a\n1.2.3.4 instagram.com\nb"))
    }

    /// SPEC §10: with `multi on` (Debian's default) every line naming a host answers, wherever it is;
    /// those lines are found, numbered as in the file written (section first), so `doctor` can name
    /// them. Null and loopback addresses, comments and other names are the user's business.
    @Test func users_lines_that_give_a_blocked_name_a_real_address_are_found_with_their_line_numbers() throws {
        let file = Self.bytes("127.0.0.1 localhost\r\n1.2.3.4\tInstagram.com www.instagram.com. # mine\r\n"
            + "0.0.0.0 instagram.com\r\n::1 instagram.com\r\n# 5.6.7.8 instagram.com\r\n10.0.0.2 nas.lan\r\n"
            + "# BEGIN scrolloff\r\n0.0.0.0 instagram.com\r\n# END scrolloff\r\n2001:db8::1 tiktok.com")
        let layout = try HostsLayout(parsing: file)
        let lines = layout.linesNaming(["instagram.com", "www.instagram.com", "tiktok.com"], firstLine: 5)
        #expect(lines == [
            HostsUserLine(number: 6, text: "1.2.3.4\tInstagram.com www.instagram.com. # mine", names: ["instagram.com", "www.instagram.com."]),
            HostsUserLine(number: 11, text: "2001:db8::1 tiktok.com", names: ["tiktok.com"]),
        ])
        #expect(layout.linesNaming([], firstLine: 1).isEmpty)
        #expect(try HostsLayout(parsing: Self.bytes("1.2.3.4 x.com")).linesNaming(["x.com"], firstLine: 1).map(\.number) == [1])
    }

    /// The byte pool behind `render` sorts and deduplicates exactly as sorting Strings would.
    @Test func render_of_many_names_in_any_order_equals_the_string_sorted_section() {
        var names: [String] = []
        var state: UInt64 = 7
        for _ in 0..<3000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let label = String(state >> 40, radix: 36)
            names.append(state % 3 == 0 ? "www.\(label).com" : "\(label).\(state % 2 == 0 ? "net" : "co.uk")")
        }
        names += names.prefix(100).map { $0.uppercased() + "." }
        let section = HostsSection.render(names: names.shuffled())
        var expected = "# BEGIN scrolloff\n# Managed by scrolloff-dns: edits here are replaced. `scrolloff-dns hosts remove` takes the section out.\n"
        for name in Set(names.map { $0.lowercased().hasSuffix(".") ? String($0.lowercased().dropLast()) : $0.lowercased() }).sorted() {
            expected += "0.0.0.0 \(name)\n:: \(name)\n"
        }
        expected += "# END scrolloff\n"
        #expect(section == Self.bytes(expected))
    }
}
