#if canImport(Glibc)
import Glibc
#endif
import Helper
import Logging
import Testing

@Suite struct LineLogFormatTests {
    static let journal = LineLogFormat(style: .journal)
    static let plain = LineLogFormat(style: .plain)

    /// sd-daemon(3): SD_CRIT 2 … SD_DEBUG 7; swift-log's trace shares debug's priority.
    @Test(arguments: [
        (Logger.Level.trace, "<7>"), (.debug, "<7>"), (.info, "<6>"), (.notice, "<5>"), (.warning, "<4>"), (.error, "<3>"),
        (.critical, "<2>"),
    ])
    func journal_lines_start_with_the_syslog_priority_of_their_level(level: Logger.Level, prefix: String) {
        let line = Self.journal.line(level: level, label: "scrolloff-dns", message: "hello", metadata: [:], timestamp: "unused")
        #expect(line == "\(prefix)scrolloff-dns: hello\n")
    }

    @Test func plain_lines_carry_time_level_label_message_and_sorted_metadata() {
        let line = Self.plain.line(
            level: .warning, label: "scrolloff-dns", message: "upstream backed off",
            metadata: ["upstream": "127.0.0.1:53", "backoff.s": "30"], timestamp: "2026-11-22T01:02:03.456Z")
        #expect(line == "2026-11-22T01:02:03.456Z warning scrolloff-dns: upstream backed off backoff.s=30 upstream=127.0.0.1:53\n")
    }

    @Test(arguments: [
        ("plain", "plain"),
        ("", #""""#),
        ("two words", #""two words""#),
        (#"say "hi""#, #""say \"hi\"""#),
        ("a=b", #""a=b""#),
        (#"C:\dir"#, #""C:\\dir""#),
        ("line\nbreak", #""line\nbreak""#),
        ("tab\there", #""tab\there""#),
        ("bell\u{7}", #""bell\u{7}""#),
    ])
    func metadata_values_are_quoted_and_escaped_when_needed(value: String, written: String) {
        let line = Self.journal.line(level: .info, label: "l", message: "m", metadata: ["k": "\(value)"], timestamp: "")
        #expect(line == "<6>l: m k=\(written)\n")
    }

    @Test func one_event_is_one_line_whatever_its_message_and_keys_hold() {
        let line = Self.plain.line(
            level: .error, label: "a\nb", message: "first\nsecond\r\nthird\u{2028}fourth",
            metadata: ["bad key\n=": "v\nw", "list": .array(["x", "y z"]), "map": .dictionary(["b": "2", "a": "1"])],
            timestamp: "T")
        #expect(line.filter { $0 == "\n" || $0 == "\r\n" }.count == 1, "\(line)")
        #expect(line.hasSuffix("\n"))
        #expect(line.contains(#"first\nsecond\r\nthird\u{2028}fourth"#))
        #expect(line.contains(#"bad_key__="v\nw""#))
        #expect(line.contains(#"list="[x,y z]""#))
        #expect(line.contains(#"map="{a=1,b=2}""#))
        #expect(line.hasPrefix(#"T error a\nb: "#))
    }

    @Test func journal_style_needs_JOURNAL_STREAM_to_name_stderr_itself() {
        #expect(!StderrLogHandler.stderrIsJournal(environment: [:]))
        #expect(!StderrLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "garbage"]))
        // A stream that is not our stderr (inherited from a parent whose stderr was the journal).
        #expect(!StderrLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "1:1"]))
        // The device and inode of this process's own stderr, as systemd would set them.
        var status = stat()
        #expect(fstat(STDERR_FILENO, &status) == 0)
        #expect(StderrLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino)"]))
    }
}
