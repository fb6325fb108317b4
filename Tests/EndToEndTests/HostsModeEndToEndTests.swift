import Foundation
import TestSupport
import Testing

/// Hosts mode through the real binaries (SPEC §10): `scrolloff-dns start --mode hosts`
/// keeps a managed section of a temporary hosts file in step with the CLI's rules, and
/// `scrolloff-dns hosts remove` gives the original bytes back. The real /etc/hosts is only ever
/// touched inside a private mount namespace, where a temporary file is bind-mounted over it.
@Suite struct HostsModeEndToEndTests {
    /// A CRLF file whose last line has no line break, with a comment and odd spacing: all of it must survive.
    static let original = Array("127.0.0.1\tlocalhost\r\n# my own  comment\r\n10.0.0.2    nas.lan   nas".utf8)

    /// A helper in hosts mode on `hostsFile`; its upstream is never asked (no DNS listener).
    final class HostsHelper: @unchecked Sendable {
        let child: Child
        let controlSocket: String

        /// - Parameters:
        ///   - wrapper: a program and its arguments run before the built helper (`unshare ...`).
        ///   - privileges: how the helper runs (`PrivilegeMode.applied(to:)`), instead of `wrapper`.
        init(scratch: Scratch, hostsFile: String?, wrapper: [String] = [], privileges: PrivilegeMode? = nil,
             mode: HelperLaunch.Mode = .hosts) throws {
            controlSocket = "\(scratch.path)/control.sock"
            // Hosts mode alone listens nowhere.
            var launch = HelperLaunch(
                executable: Products.scrolloffDNS, listen: mode == .hosts ? [] : ["127.0.0.1:0"], upstreams: ["127.0.0.1:9"],
                stateDirectory: "\(scratch.path)/state", controlSocket: controlSocket, mode: mode,
                extra: hostsFile.map { ["--hosts-file", $0] } ?? [], wrappers: wrapper.isEmpty ? [] : [.command(wrapper)])
            if let privileges {
                launch.wrappers = []
                launch = try privileges.applied(to: launch)
            }
            child = try launch.spawn(scratch: scratch, label: "hosts-helper-\(UUID().uuidString)")
            let up = try Poll.until(seconds: 30) { (try? self.cli(["status"]).exitCode) == 0 || !self.child.isRunning }
            guard up, child.isRunning else { throw HarnessError("the hosts-mode helper did not come up: \(child.stderr)") }
        }

        func cli(_ arguments: [String]) throws -> Outcome {
            try runWithStatus(Products.scrolloff, arguments + ["--socket", controlSocket])
        }

        func stop() {
            guard child.isRunning else { return }
            child.signal(SIGTERM)
            child.process.wait()
        }
    }

    static func bytes(_ path: String) -> [UInt8] { (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? [] }
    static func text(_ path: String) -> String { String(decoding: bytes(path), as: UTF8.self) }

    /// Whether the file holds `needle` byte for byte (String comparison would treat CRLF as one character).
    static func has(_ path: String, _ needle: String) -> Bool {
        let hay = bytes(path), n = Array(needle.utf8)
        guard !n.isEmpty, hay.count >= n.count else { return false }
        return (0...(hay.count - n.count)).contains { hay[$0..<($0 + n.count)].elementsEqual(n) }
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
    }

    /// Polls every 20 ms; returns the seconds it took, or nil if `condition` never held within `seconds`.
    static func within(_ seconds: Double, _ condition: () -> Bool) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            if condition() { return Date().timeIntervalSince(start) }
            usleep(20_000)
        }
        return condition() ? Date().timeIntervalSince(start) : nil
    }

    @Test func block_use_and_grant_end_rewrite_the_section_within_a_second_and_remove_restores_the_crlf_file() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        try Self.write(Self.original, to: hosts)
        let helper = try HostsHelper(scratch: scratch, hostsFile: hosts)
        defer { helper.stop() }
        #expect(Self.bytes(hosts) == Self.original, "nothing blocked: the file is not touched")

        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        let blocked = Self.within(1.0) { Self.has(hosts, "0.0.0.0 instagram.com\r\n:: instagram.com\r\n") }
        #expect(blocked != nil, "section not written within 1 s: \(Self.text(hosts)) \(helper.child.stderr)")
        let written = Self.bytes(hosts)
        #expect(written.starts(with: Array("# BEGIN scrolloff\r\n".utf8)))
        // The curated list's common subdomains are written too; the file keeps CRLF throughout.
        #expect(Self.has(hosts, "0.0.0.0 www.instagram.com\r\n") && Self.has(hosts, "0.0.0.0 i.instagram.com\r\n"))
        #expect(written.indices.allSatisfy { written[$0] != 0x0A || ($0 > 0 && written[$0 - 1] == 0x0D) }, "a bare LF in a CRLF file")
        #expect(Array(Self.bytes(hosts).suffix(Self.original.count)) == Self.original, "the user's lines moved")
        #expect(Self.bytes(hosts + ".scrolloff.bak") == Self.original)
        // doctor checks the section instead of a DNS path that hosts mode does not use.
        let doctor = try helper.cli(["doctor"])
        #expect(doctor.exitCode == 0, "\(doctor)")
        #expect(doctor.output.contains("PASS  hosts") && doctor.output.contains("names in the scrolloff section"), "\(doctor)")
        #expect(!doctor.output.contains("listeners"), "\(doctor)")

        // Re-applying the same state leaves the file alone (a second block, a list refresh...).
        let mtime = try FileManager.default.attributesOfItem(atPath: hosts)[.modificationDate] as? Date
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        usleep(500_000)
        #expect(try FileManager.default.attributesOfItem(atPath: hosts)[.modificationDate] as? Date == mtime)

        // A grant opens it: the names leave the file within 1 s, and come back when the grant ends.
        let use = try helper.cli(["use", "instagram", "--for", "5s", "--json"])
        #expect(use.exitCode == 0, "\(use)")
        let opened = Self.within(1.0) { !Self.has(hosts, "instagram.com") }
        #expect(opened != nil, "grant did not open the hosts file within 1 s: \(Self.text(hosts))")
        #expect(Self.bytes(hosts) == Self.original, "with nothing blocked the file is the user's exactly")
        let grant = try #require(try jsonObject(use.output)["grant"] as? [String: Any], "\(use)")
        let end = try #require((grant["end"] as? String).flatMap(Self.wireDate), "\(use)")
        let closed = Self.within(end.timeIntervalSinceNow + 5) { Self.has(hosts, "0.0.0.0 instagram.com\r\n") }
        #expect(closed != nil, "not blocked again after the grant")
        let late = Date().timeIntervalSince(end)
        #expect(late < 1.0, "blocked again \(late) s after the grant ended")

        // Unblock: the section goes; `hosts remove` finds nothing; stop, block state kept, remove.
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        #expect(Self.within(1.0) { Self.has(hosts, "0.0.0.0 tiktok.com\r\n") } != nil)
        helper.stop()
        let remove = try runWithStatus(Products.scrolloffDNS, ["hosts", "remove", "--hosts-file", hosts, "--control-socket", helper.controlSocket])
        #expect(remove.exitCode == 0, "\(remove)")
        #expect(Self.bytes(hosts) == Self.original, "hosts remove did not give the original bytes back: \(Self.text(hosts))")
        let again = try runWithStatus(Products.scrolloffDNS, ["hosts", "remove", "--hosts-file", hosts, "--control-socket", helper.controlSocket])
        #expect(again.exitCode == 0 && again.output.contains("nothing to remove"), "\(again)")
    }

    /// SPEC §4a: in hosts mode a pause blocks every name the section can hold — the profile's
    /// managed names, open ones included — and resume takes the open ones out again, each within 1 s.
    @Test func a_pause_writes_the_profiles_open_managed_names_and_resume_takes_them_out() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        try Self.write(Self.original, to: hosts)
        let helper = try HostsHelper(scratch: scratch, hostsFile: hosts)
        defer { helper.stop() }
        // tiktok is managed by a window two hours from now (the helper's and this process's zone): open now.
        let hour = Calendar.current.component(.hour, from: Date())
        let from = String(format: "%02d:00", (hour + 2) % 24), to = String(format: "%02d:00", (hour + 3) % 24)
        let scheduled = try helper.cli(["schedule", "add", "later", "--from", from, "--to", to, "--entries", "tiktok"])
        #expect(scheduled.exitCode == 0, "\(scheduled)")
        usleep(500_000)
        #expect(Self.bytes(hosts) == Self.original, "tiktok is open until \(from): \(Self.text(hosts))")

        let paused = try helper.cli(["pause", "--profile", "default", "10m", "--reason", "dinner"])
        #expect(paused.exitCode == 0, "\(paused)")
        #expect(Self.within(1.0) { Self.has(hosts, "0.0.0.0 tiktok.com\r\n") } != nil, "the pause did not write tiktok: \(Self.text(hosts))")
        let resumed = try helper.cli(["resume", "--profile", "default"])
        #expect(resumed.exitCode == 0, "\(resumed)")
        #expect(Self.within(1.0) { Self.bytes(hosts) == Self.original } != nil, "resume did not take tiktok out: \(Self.text(hosts))")
    }

    @Test func damaged_section_is_refused_with_its_line_numbers_and_left_exactly_as_it_was() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        let damaged = Array("127.0.0.1 localhost\n# BEGIN scrolloff\n0.0.0.0 x.com\n# BEGIN scrolloff\n".utf8)
        try Self.write(damaged, to: hosts)
        let helper = try HostsHelper(scratch: scratch, hostsFile: hosts)
        defer { helper.stop() }
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        let logged = try Poll.until(seconds: 5) { helper.child.stderr.contains("lines 2 and 4") }
        #expect(logged, "\(helper.child.stderr)")
        // Back-off: said once, not once per publish or retry.
        usleep(1_500_000)
        #expect(helper.child.stderr.components(separatedBy: "cannot update the hosts file").count - 1 == 1, "\(helper.child.stderr)")
        #expect(Self.bytes(hosts) == damaged)
        #expect(!FileManager.default.fileExists(atPath: hosts + ".scrolloff.bak"))
        let doctor = try helper.cli(["doctor", "--json"])
        #expect(doctor.exitCode == 1, "\(doctor)")
        let checks = try #require(try jsonObject(doctor.output)["checks"] as? [[String: Any]], "\(doctor)")
        let check = try #require(checks.first { $0["name"] as? String == "hosts" }, "\(doctor)")
        #expect(check["status"] as? String == "fail")
        #expect((check["detail"] as? String)?.contains("lines 2 and 4") == true, "\(check)")
        #expect((check["fix"] as? String)?.contains("# END scrolloff") == true, "\(check)")
        let remove = try runWithStatus(Products.scrolloffDNS, ["hosts", "remove", "--hosts-file", hosts, "--control-socket", helper.controlSocket])
        #expect(remove.exitCode != 0 && remove.output.contains("lines 2 and 4"), "\(remove)")
        #expect(Self.bytes(hosts) == damaged)

        // Fixed by hand: the helper takes over again on its own (retry with back-off).
        try Self.write(Array("127.0.0.1 localhost\n".utf8), to: hosts)
        let fixed = try Poll.until(seconds: 10) { Self.has(hosts, "0.0.0.0 instagram.com\n") }
        #expect(fixed, "\(Self.text(hosts)) \(helper.child.stderr)")
        #expect(helper.child.stderr.contains("hosts file written again"), "\(helper.child.stderr)")
    }

    /// The real path, /etc/hosts, as a bind mount in a private mount namespace: the rename onto a
    /// mount point fails (EBUSY), so the helper writes in place, and glibc's resolver (`getent`)
    /// inside the namespace answers 0.0.0.0 for the blocked name while the host's file is untouched.
    @Test func in_a_mount_namespace_etc_hosts_bind_mount_is_written_in_place_and_getent_answers_null() throws {
        let scratch = try Scratch()
        let original = Array("127.0.0.1 localhost\n::1 localhost\n".utf8)
        let realBefore = Self.bytes("/etc/hosts")
        let space = try HostsNamespace(scratch: scratch, hostsBytes: original, resolver: false)
        defer { space.stop() }
        let helper = space.helper, hosts = space.hosts, upper = space.etcUpper
        func getent(_ name: String) throws -> Outcome {
            // `-s files`: only the hosts file answers, so an open name is "not found" at once
            // rather than a DNS lookup that has no network here.
            try space.getent(["-s", "files", "ahostsv4", name])
        }
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        let written = Self.within(1.0) { Self.has(hosts, "0.0.0.0 instagram.com\n") }
        #expect(written != nil, "\(Self.text(hosts)) \(helper.child.stderr)")
        let answer = try getent("www.instagram.com")
        #expect(answer.exitCode == 0 && answer.output.hasPrefix("0.0.0.0"), "\(answer)")
        // The log line follows the write, so it may come a moment after the bytes.
        let logged = Self.within(5.0) {
            helper.child.stderr.contains("in_place=true") || helper.child.stderr.contains("\"hosts.in_place\":\"true\"")
        }
        #expect(logged != nil, "a bind-mounted file cannot be renamed over: \(helper.child.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(upper)/hosts.scrolloff.prev"), "the bytes before the in-place write")
        #expect(Self.bytes("\(upper)/hosts.scrolloff.bak") == original)
        #expect(!FileManager.default.fileExists(atPath: "/etc/hosts.scrolloff.bak"), "a backup landed in the real /etc")

        let use = try helper.cli(["use", "instagram", "--for", "3s"])
        #expect(use.exitCode == 0, "\(use)")
        let open = Self.within(1.5) { (try? getent("www.instagram.com").exitCode) == 2 }
        #expect(open != nil, "\((try? getent("www.instagram.com"))?.description ?? "?")")
        #expect(Self.bytes(hosts) == original, "in-place writes left the user's file exactly as it was")
        let closed = Self.within(6) { (try? getent("www.instagram.com").output.hasPrefix("0.0.0.0")) == true }
        #expect(closed != nil, "not blocked again after the grant")
        #expect(Self.bytes("/etc/hosts") == realBefore, "the host's own /etc/hosts changed")
    }

    /// Under the shipped unit's capability set (CAP_CHOWN and CAP_NET_BIND_SERVICE only, no
    /// CAP_DAC_OVERRIDE or CAP_FOWNER): root still owns /etc/hosts, so the rename, the mode and the
    /// owner copy all work, and nothing needs more.
    @Test func under_the_units_capability_set_the_section_is_written_with_mode_and_owner_kept() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        try Self.write(Self.original, to: hosts)
        let helper = try HostsHelper(scratch: scratch, hostsFile: hosts, privileges: .unitCapabilities)
        defer { helper.stop() }
        PrivilegeMode.unitCapabilities.check(helper.child.process.pid)
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        let written = Self.within(1.0) { Self.has(hosts, "0.0.0.0 tiktok.com\r\n") }
        #expect(written != nil, "\(Self.text(hosts)) \(helper.child.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: hosts)
        #expect(attributes[.posixPermissions] as? Int == 0o644)
        #expect(attributes[.ownerAccountID] as? Int == 0 && attributes[.groupOwnerAccountID] as? Int == 0, "\(attributes)")
    }

    /// `--mode both`: the sinkhole answers the blocked name and the hosts file holds it, from one
    /// published enforcement; in `--mode hosts` nothing listens for DNS.
    @Test func both_mode_answers_dns_and_writes_the_file_and_hosts_mode_opens_no_dns_listener() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        try Self.write(Array("127.0.0.1 localhost\n".utf8), to: hosts)
        let both = try HostsHelper(scratch: scratch, hostsFile: hosts, mode: .both)
        defer { both.stop() }
        let udp = try both.child.waitForLine { $0.hasPrefix("listening udp 127.0.0.1:") }
        let port = try #require(udp.split(separator: ":").last.flatMap { Int($0) })
        #expect(try both.cli(["block", "instagram"]).exitCode == 0)
        #expect(Self.within(1.0) { Self.has(hosts, "0.0.0.0 instagram.com\n") } != nil, "\(both.child.stderr)")
        #expect(try shortA(port, "www.instagram.com") == "0.0.0.0")
        let doctor = try both.cli(["doctor", "--json"])
        #expect(doctor.output.contains("\"name\" : \"hosts\"") || doctor.output.contains("\"name\":\"hosts\""), "\(doctor)")
        #expect(doctor.output.contains("listeners"), "both modes' checks: \(doctor)")
        both.stop()

        let other = try Scratch()
        let only = try HostsHelper(scratch: other, hostsFile: hosts)
        defer { only.stop() }
        usleep(300_000)
        // No DNS listener; the household page (on loopback by default) may listen.
        #expect(!only.child.stdout.contains("listening udp") && !only.child.stdout.contains("listening tcp"), "\(only.child.stdout)")
    }

    /// A hosts-mode helper on a file holding `127.0.0.1 localhost`, with instagram blocked and its
    /// section written.
    static func instagramBlocked(_ scratch: Scratch, privileges: PrivilegeMode? = nil) throws -> (HostsHelper, String) {
        let hosts = "\(scratch.path)/hosts"
        try write(Array("127.0.0.1 localhost\n".utf8), to: hosts)
        let helper = try HostsHelper(scratch: scratch, hostsFile: hosts, privileges: privileges)
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        #expect(within(1.0) { has(hosts, "0.0.0.0 instagram.com\n") } != nil)
        return (helper, hosts)
    }

    /// SPEC §10: an edit by hand to the section is undone: a line deleted from the section with an
    /// in-place write, and the whole section dropped by an editor-style rename, both come back within
    /// 1 s (inotify wakes the helper; the 30 s check alone would be too slow), and the user's own
    /// change outside the section is kept.
    @Test func section_edited_or_removed_by_hand_is_put_back_within_a_second_keeping_the_users_lines() throws {
        let scratch = try Scratch()
        let (helper, hosts) = try Self.instagramBlocked(scratch)
        defer { helper.stop() }
        let kept = Self.bytes(hosts)

        // In place (as `sed -i`-less tools and `>>` do): drop the instagram.com lines, add a line of one's own.
        let edited = Self.text(hosts).replacingOccurrences(of: "0.0.0.0 instagram.com\n:: instagram.com\n", with: "")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: hosts))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data((edited + "10.0.0.9 mine.lan\n").utf8))
        try handle.close()
        let restored = Self.within(1.0) { Self.has(hosts, "0.0.0.0 instagram.com\n") }
        #expect(restored != nil, "not put back within 1 s: \(Self.text(hosts))")
        #expect(Self.bytes(hosts) == kept + Array("10.0.0.9 mine.lan\n".utf8), "\(Self.text(hosts))\n\(helper.child.stderr)")

        // An editor's save: a new file renamed over the old one, without the section.
        try Data("127.0.0.1 localhost\n".utf8).write(to: URL(fileURLWithPath: hosts), options: .atomic)
        let back = Self.within(1.0) { Self.has(hosts, "0.0.0.0 www.instagram.com\n") }
        #expect(back != nil, "not put back within 1 s after a rename: \(Self.text(hosts))")
        #expect(helper.child.stderr.contains("changed outside Scroll Off"), "\(helper.child.stderr)")
    }

    /// `slow-command > hosts` while the helper runs: the shell truncates the file at once and the
    /// command writes a second later. The helper waits for the command to close the file (it says
    /// so once), then puts the section back above the command's lines; nothing the command wrote
    /// is lost to a rename.
    /// Under the unit's capabilities the helper cannot look into a full-root shell's `/proc`
    /// entries (no CAP_SYS_PTRACE); the lease test still sees the writer.
    @Test(arguments: [PrivilegeMode.root, .unitCapabilities])
    func a_command_writing_the_file_slowly_keeps_its_lines_and_the_section_comes_back_after_it(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let (helper, hosts) = try Self.instagramBlocked(scratch, privileges: mode)
        defer { helper.stop() }
        let command = try runWithStatus("/bin/sh", ["-c", "exec > \"$0\"; sleep 1.5; printf '127.0.0.1 localhost\\n10.0.0.9 mine.lan\\n'", hosts])
        #expect(command.exitCode == 0, "\(command)")
        let back = Self.within(2.0) { Self.has(hosts, "0.0.0.0 instagram.com\n") }
        #expect(back != nil, "not put back within 2 s of the command's end: \(Self.text(hosts))")
        #expect(Self.text(hosts).hasSuffix("# END scrolloff\n127.0.0.1 localhost\n10.0.0.9 mine.lan\n"), "\(Self.text(hosts))")
        #expect(ControlLimitsEndToEndTests.occurrences("another program is writing the hosts file", in: helper.child.stderr) == 1, "\(helper.child.stderr)")
    }

    /// SPEC §10: killing the helper (SIGKILL) in the middle of rewrites never leaves a truncated or
    /// mixed file: a reader sees the old file or the new one, and the next start removes any
    /// temporary file the kill left beside it.
    @Test func kill_9_during_rewrites_never_leaves_a_torn_file_or_a_leftover() throws {
        let scratch = try Scratch()
        let hosts = "\(scratch.path)/hosts"
        try Self.write(Self.original, to: hosts)
        let services = ["4chan", "9gag", "bbc-news", "bereal", "bilibili", "bluesky", "buzzfeed", "cnn", "dailymail", "discord"]
        /// Whole: the user's bytes, alone or after one complete section in CRLF.
        func whole() -> Bool {
            let bytes = Self.bytes(hosts)
            if bytes == Self.original { return true }
            let end = Array("# END scrolloff\r\n".utf8)
            guard bytes.starts(with: Array("# BEGIN scrolloff\r\n".utf8)), bytes.count >= Self.original.count + end.count else { return false }
            return Array(bytes.suffix(Self.original.count + end.count)) == end + Self.original
        }
        for (round, service) in services.enumerated() {
            let helper = try HostsHelper(scratch: scratch, hostsFile: hosts)
            let blocked = try helper.cli(["block", service])
            #expect(blocked.exitCode == 0, "\(blocked)")
            usleep(UInt32((round * 7) % 20) * 1000) // 0–19 ms: somewhere in the rewrite
            helper.child.signal(SIGKILL)
            helper.child.process.wait()
            #expect(whole(), "round \(round): torn file \(Self.text(hosts))")
        }
        let last = try HostsHelper(scratch: scratch, hostsFile: hosts)
        defer { last.stop() }
        #expect(whole(), "\(Self.text(hosts))")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".hosts.scrolloff-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        #expect(Self.within(2.0) { Self.has(hosts, "0.0.0.0 discord.com\r\n") } != nil, "every block kept across the kills")
    }

    static func wireDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
