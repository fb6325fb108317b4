import Foundation
import Testing

/// Hosts mode as glibc sees it (SPEC §10): `getent` inside a private namespace whose
/// /etc/hosts is the helper's file and whose resolver knows instagram.com's real address
/// (``HostsNamespace``). Outside a window the name gets the resolver's address; inside it, the
/// section's 0.0.0.0, within a second of the edge, with the helper's clock faked or real.
@Suite struct HostsModeGetentEndToEndTests {
    static let name = "instagram.com"
    static let plainHosts = Array("127.0.0.1 localhost\n::1 localhost\n".utf8)

    /// Polls `getent ahostsv4` every 100 ms until it answers only 0.0.0.0; the instant it did, or nil.
    static func firstNull(_ space: HostsNamespace, until deadline: Date) throws -> Date? {
        while Date() < deadline {
            if try space.addresses(name) == ["0.0.0.0"] { return Date() }
            usleep(100_000)
        }
        return nil
    }

    /// SPEC §10: getent answers 0.0.0.0 inside a window and the real address outside it, under
    /// faketime: the helper's clocks start at Monday 22:59:40 and a block window opens at 23:00.
    @Test func under_faketime_getent_gives_the_real_address_before_a_2300_window_and_null_inside_it() throws {
        let scratch = try Scratch()
        let space = try HostsNamespace(scratch: scratch, hostsBytes: Self.plainHosts,
                                       environment: FakeClock.allClocks(startingAt: "2026-11-23 22:59:40"))
        defer { space.stop() }
        let added = try space.helper.cli(["schedule", "add", "evening", "--from", "23:00", "--to", "23:30", "--days", "mon",
                                          "--entries", "instagram"])
        #expect(added.exitCode == 0, "\(added)")
        // Where 23:00 falls on the test's own (real) clock: the helper's "now" read just now.
        let status = try space.helper.cli(["status", "--json"])
        let nowText = try #require(try jsonObject(status.output)["now"] as? String, "\(status)")
        let helperNow = try #require(EnforcementTimelineEndToEndTests.wireDate(nowText), "\(status)")
        let edge = Date().addingTimeInterval(FakeClockEdge.seconds("2026-11-23 23:00:00") - helperNow.timeIntervalSince1970)
        #expect(edge.timeIntervalSinceNow > 5, "the helper took too long to start; the edge is at \(edge)")

        #expect(try space.addresses(Self.name) == [HostsNamespace.realAddress], "before the window: the resolver's answer")
        #expect(HostsModeEndToEndTests.bytes(space.hosts) == Self.plainHosts, "nothing blocked yet: the file is the user's")
        EnforcementTimelineEndToEndTests.sleep(until: edge.addingTimeInterval(-1.5))
        #expect(try space.addresses(Self.name) == [HostsNamespace.realAddress], "blocked before the window")
        let blocked = try #require(try Self.firstNull(space, until: edge.addingTimeInterval(5)), "still open 5 s into the window")
        #expect(blocked.timeIntervalSince(edge) < 1.0, "blocked \(blocked.timeIntervalSince(edge)) s after 23:00")
        // gethostbyname2 asks for IPv6 first, and the section holds `:: instagram.com` too.
        let hosts = try space.getent(["hosts", Self.name])
        #expect(hosts.exitCode == 0 && hosts.output.hasPrefix("::"), "\(hosts)")
    }

    /// The same on the real clock: a window starting at the next whole minute (schedules are HH:MM).
    @Test func on_the_real_clock_getent_flips_to_null_within_a_second_of_a_window_at_the_next_minute() throws {
        let scratch = try Scratch()
        let space = try HostsNamespace(scratch: scratch, hostsBytes: Self.plainHosts)
        defer { space.stop() }
        let (from, edge) = WallMinute.next()
        let to = WallMinute.text(edge.addingTimeInterval(30 * 60))
        let added = try space.helper.cli(["schedule", "add", "work", "--from", from, "--to", to, "--entries", "instagram"])
        #expect(added.exitCode == 0, "\(added)")
        #expect(try space.addresses(Self.name) == [HostsNamespace.realAddress])
        EnforcementTimelineEndToEndTests.sleep(until: edge.addingTimeInterval(-1.5))
        #expect(try space.addresses(Self.name) == [HostsNamespace.realAddress], "blocked before the window")
        let blocked = try #require(try Self.firstNull(space, until: edge.addingTimeInterval(5)), "still open 5 s into the window")
        #expect(blocked.timeIntervalSince(edge) < 1.0, "blocked \(blocked.timeIntervalSince(edge)) s after the window started")
    }

    /// SPEC §10: `1.2.3.4 instagram.com` of the user's own still answered while blocked. Scroll Off
    /// keeps every byte outside its section, so it cannot take the line out; what it does: the
    /// section goes first (glibc's `multi off` then answers from it alone), and `doctor` names the
    /// line, because with `multi on` (Debian's default) glibc returns it as well and `getaddrinfo`
    /// sorts it first. Once the line goes, only 0.0.0.0 answers and `doctor` passes.
    @Test func users_own_line_for_a_blocked_name_loses_under_multi_off_and_doctor_names_it_under_multi_on() throws {
        let scratch = try Scratch()
        let mine = "127.0.0.1 localhost\n1.2.3.4 instagram.com\n"
        let space = try HostsNamespace(scratch: scratch, hostsBytes: Array(mine.utf8))
        defer { space.stop() }
        #expect(try space.addresses(Self.name, multi: false) == ["1.2.3.4"])
        #expect(try space.helper.cli(["block", "instagram"]).exitCode == 0)
        let written = HostsModeEndToEndTests.within(2) { HostsModeEndToEndTests.has(space.hosts, "0.0.0.0 instagram.com\n") }
        #expect(written != nil, "\(HostsModeEndToEndTests.text(space.hosts)) \(space.helper.child.stderr)")
        let file = HostsModeEndToEndTests.text(space.hosts)
        #expect(file.hasPrefix("# BEGIN scrolloff\n") && file.hasSuffix("# END scrolloff\n" + mine), "the user's lines after the section, as they were")

        #expect(try space.addresses(Self.name, multi: false) == ["0.0.0.0"], "multi off: the first line naming it is the section's")
        let multi = try space.addresses(Self.name, multi: true)
        #expect(multi.contains("1.2.3.4") && multi.contains("0.0.0.0"), "multi on: glibc gathers every line: \(multi)")
        // The line's number in the file as written: the section's lines, then localhost, then it.
        let number = file.split(separator: "\n", omittingEmptySubsequences: false).firstIndex(of: "1.2.3.4 instagram.com").map { $0 + 1 }
        let doctor = try space.helper.cli(["doctor", "--json"])
        #expect(doctor.exitCode == 1, "\(doctor)")
        let checks = try #require(try jsonObject(doctor.output)["checks"] as? [[String: Any]], "\(doctor)")
        let check = try #require(checks.first { $0["name"] as? String == "hosts" }, "\(doctor)")
        #expect(check["status"] as? String == "fail")
        #expect((check["detail"] as? String)?.contains("line \(number ?? -1) (`1.2.3.4 instagram.com`)") == true, "\(check)")
        #expect(space.helper.child.stderr.contains("lines of your own in the hosts file open blocked names"), "\(space.helper.child.stderr)")

        // The user takes their line out, in place (a bind-mounted file cannot be renamed over), and
        // through its own folder's path, not /etc: only the file's own inotify watch hears it.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: space.hosts))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(file.replacingOccurrences(of: "1.2.3.4 instagram.com\n", with: "").utf8))
        try handle.close()
        let passes = try Poll.until(seconds: 2) {
            let again = try space.helper.cli(["doctor", "--json"])
            let checks = try jsonObject(again.output)["checks"] as? [[String: Any]] ?? []
            return checks.first { $0["name"] as? String == "hosts" }?["status"] as? String == "pass"
        }
        #expect(passes, "doctor still names the line after it went")
        #expect(try space.addresses(Self.name, multi: true) == ["0.0.0.0"])
    }
}
