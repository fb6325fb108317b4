import Foundation
import Testing

/// Hosts mode against people, not rules (SPEC §10, §11): a hand edit of the section is put
/// back and recorded as one tamper event per edit; a strict curfew, which a hosts file cannot
/// express, writes every name the lists know and `doctor` says what stays open.
@Suite struct HostsModeTamperEndToEndTests {
    typealias H = HostsModeEndToEndTests

    /// The tamper events `scrolloff events --json` lists: (message) for each.
    static func tamperEvents(_ helper: H.HostsHelper) throws -> [String] {
        let events = try helper.cli(["events", "--json"])
        #expect(events.exitCode == 0, "\(events)")
        let object = try JSONSerialization.jsonObject(with: Data(events.output.utf8))
        let rows = (object as? [[String: Any]]) ?? ((object as? [String: Any])?["events"] as? [[String: Any]]) ?? []
        return rows.filter { $0["kind"] as? String == "tamper" }.map { $0["message"] as? String ?? "" }
    }

    static func overwriteInPlace(_ path: String, with text: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    /// SPEC §10: a restored hand edit was only a log line. Now each edit is one tamper event: not one
    /// per inotify wake (the helper's own rewrite wakes the watcher too), none for a change of the
    /// user's own lines, none for a rule change, and `doctor` counts them.
    @Test func each_hand_edit_of_the_section_is_put_back_and_recorded_once_as_a_tamper_event() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        try H.write(Array("127.0.0.1 localhost\n".utf8), to: hosts)
        let helper = try H.HostsHelper(scratch: scratch, hostsFile: hosts)
        defer { helper.stop() }
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        #expect(H.within(1.0) { H.has(hosts, "0.0.0.0 instagram.com\n") } != nil)

        // Not tampering: a line of one's own below the section, and a rule change.
        try Self.overwriteInPlace(hosts, with: H.text(hosts) + "10.0.0.9 mine.lan\n")
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        #expect(H.within(1.0) { H.has(hosts, "0.0.0.0 tiktok.com\n") } != nil)
        usleep(700_000)
        let none = try Self.tamperEvents(helper)
        #expect(none.isEmpty, "\(none)")

        // Edit 1, in place in three writes (each an inotify event): the instagram.com lines go.
        let edited = H.text(hosts).replacingOccurrences(of: "0.0.0.0 instagram.com\n:: instagram.com\n", with: "")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: hosts))
        try handle.truncate(atOffset: 0)
        for part in [edited.prefix(40), edited.dropFirst(40).prefix(40), edited.dropFirst(80)] {
            try handle.write(contentsOf: Data(part.utf8))
            usleep(30_000)
        }
        try handle.close()
        #expect(H.within(1.5) { H.has(hosts, "0.0.0.0 instagram.com\n") } != nil, "not put back: \(H.text(hosts))")
        // The put-back itself wakes the watcher; a second look must find nothing to record.
        usleep(1_000_000)
        var tamper = try Self.tamperEvents(helper)
        #expect(tamper.count == 1, "\(tamper)")
        #expect(tamper.first?.contains("2 lines taken out") == true && tamper.first?.contains(hosts) == true, "\(tamper)")
        #expect(H.has(hosts, "10.0.0.9 mine.lan\n"), "the user's line was kept")

        // Edit 2, an editor's save (a new file renamed over it) without the section.
        try Data("127.0.0.1 localhost\n10.0.0.9 mine.lan\n".utf8).write(to: URL(fileURLWithPath: hosts), options: .atomic)
        #expect(H.within(1.5) { H.has(hosts, "0.0.0.0 www.instagram.com\n") } != nil, "not put back after a rename: \(H.text(hosts))")
        usleep(1_000_000)
        tamper = try Self.tamperEvents(helper)
        #expect(tamper.count == 2, "\(tamper)")
        #expect(tamper.last?.contains("was taken out") == true, "\(tamper)")

        // `doctor` counts the edits put back, and points at `scrolloff events`; the clock check
        // does not mistake them for clock changes.
        let doctor = try helper.cli(["doctor", "--json"])
        #expect(doctor.exitCode == 0, "\(doctor)")
        #expect(doctor.output.contains("2 hand edits of the section put back"), "\(doctor)")
        #expect(!doctor.output.contains("clock changes caught") && !doctor.output.contains("clock change caught"), "\(doctor)")
    }

    /// SPEC §2 strict curfew "blocks every name except the always-allow list": in hosts mode the
    /// section lists every name of every list (not only the curfew's entries), and `doctor` warns,
    /// without failing, that names no list holds stay open.
    @Test func strict_curfew_in_hosts_mode_writes_every_listed_name_and_doctor_warns_what_stays_open() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        try H.write(Array("127.0.0.1 localhost\n".utf8), to: hosts)
        let helper = try H.HostsHelper(scratch: scratch, hostsFile: hosts)
        defer { helper.stop() }
        // A curfew from the current minute for an hour, in the helper's own zone (the system's).
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        func hhmm(_ date: Date) -> String {
            let c = calendar.dateComponents([.hour, .minute], from: date)
            return String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
        }
        let now = Date()
        let added = try helper.cli(["schedule", "add", "night", "--from", hhmm(now), "--to", hhmm(now.addingTimeInterval(3600)),
                                    "--curfew", "--strict", "--entries", "instagram"])
        #expect(added.exitCode == 0, "\(added)")
        // tiktok and youtube are in no rule: DNS would block them under the strict curfew, so the file lists them.
        let written = H.within(2.0) { H.has(hosts, "0.0.0.0 instagram.com\n") && H.has(hosts, "0.0.0.0 tiktok.com\n") && H.has(hosts, "0.0.0.0 youtube.com\n") }
        #expect(written != nil, "\(H.text(hosts).prefix(600))")
        #expect(!H.has(hosts, "use-application-dns.net"), "a canary was written")
        let doctor = try helper.cli(["doctor", "--json"])
        #expect(doctor.exitCode == 0, "a warning is not a failure: \(doctor)")
        let checks = try #require(try jsonObject(doctor.output)["checks"] as? [[String: Any]], "\(doctor)")
        let warning = try #require(checks.first { $0["name"] as? String == "strict_curfew" }, "\(doctor)")
        #expect(warning["status"] as? String == "warn")
        #expect((warning["detail"] as? String)?.contains("It is in force now") == true, "\(warning)")
        #expect((warning["fix"] as? String)?.contains("--mode both") == true, "\(warning)")
        let text = try helper.cli(["doctor"])
        #expect(text.output.contains("WARN  strict_curfew"), "\(text)")
    }
}
