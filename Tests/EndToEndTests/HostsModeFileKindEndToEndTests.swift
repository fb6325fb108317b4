import Foundation
import Testing

/// What hosts mode finds in the hosts file's place, through the real helper (SPEC §10, §11): a
/// symbolic link is refused, never followed, and `doctor` and the log say what was found and what
/// to do; `chattr +i` gets `chattr -i` as its fix, not advice about the unit's ReadWritePaths.
@Suite struct HostsModeFileKindEndToEndTests {
    typealias H = HostsModeEndToEndTests

    /// The hosts check of `doctor --json`: (status, detail, fix).
    static func hostsCheck(_ helper: H.HostsHelper) throws -> (status: String, detail: String, fix: String) {
        let doctor = try helper.cli(["doctor", "--json"])
        let checks = (try? jsonObject(doctor.output)["checks"] as? [[String: Any]]) ?? []
        let check = checks.first { $0["name"] as? String == "hosts" } ?? [:]
        return (check["status"] as? String ?? "", check["detail"] as? String ?? "", check["fix"] as? String ?? "")
    }

    static func chattr(_ flag: String, _ path: String) -> Bool {
        (try? runWithStatus("/usr/bin/chattr", [flag, path]).exitCode) == 0
    }

    /// Before: the helper read the file the link named (here a root-only 0600 file) and renamed a
    /// copy of it, section added and mode 0600, over the link.
    @Test func a_symbolic_link_put_in_place_of_the_hosts_file_is_refused_logged_and_shown_by_doctor() throws {
        let scratch = try Scratch()
        let (helper, hosts) = try H.instagramBlocked(scratch)
        defer { helper.stop() }
        let secret = "\(scratch.path)/shadow-hostsdns"
        let secretText = "root:$6$not-for-members:20000:0:99999:7:::\n"
        try Data(secretText.utf8).write(to: URL(fileURLWithPath: secret))
        chmod(secret, 0o600)
        // Put in place the way a person would (`ln -sf`): a new link renamed over the file.
        #expect(symlink(secret, hosts + ".link") == 0 && rename(hosts + ".link", hosts) == 0)
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        let logged = try Poll.until(seconds: 5) { helper.child.stderr.contains("is a symbolic link to \(secret)") }
        #expect(logged, "\(helper.child.stderr)")

        var st = stat()
        #expect(lstat(hosts, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK, "the link was replaced")
        #expect(H.text(secret) == secretText)
        // No file of the folder but the secret itself holds its line (the backup is the original
        // hosts file; `hosts`, checked above to be the link, reads as the secret through it).
        let copies = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
            .filter { $0 != "shadow-hostsdns" && $0 != "hosts" && H.text("\(scratch.path)/\($0)").contains("not-for-members") }
        #expect(copies.isEmpty, "the secret was copied to \(copies)")

        let check = try Self.hostsCheck(helper)
        #expect(check.status == "fail", "\(check)")
        #expect(check.detail.contains("a symbolic link to \(secret)") && check.detail.contains("Nothing was read or changed"), "\(check)")
        #expect(check.fix.contains("sudo rm \(hosts)") && check.fix.contains("--hosts-file"), "\(check)")

        // A regular file back: the helper takes over again on its own, mode 0644 kept.
        unlink(hosts)
        try H.write(Array("127.0.0.1 localhost\n".utf8), to: hosts)
        let back = try Poll.until(seconds: 10) { H.has(hosts, "0.0.0.0 tiktok.com\n") }
        #expect(back, "\(H.text(hosts)) \(helper.child.stderr)")
        #expect((try FileManager.default.attributesOfItem(atPath: hosts)[.posixPermissions] as? Int) == 0o644)
        #expect(try Poll.until(seconds: 5) { (try? Self.hostsCheck(helper).status) == "pass" })
    }

    /// Before: "permission denied (errno 1)" and a fix about ReadWritePaths, which cannot help.
    @Test func chattr_plus_i_on_the_hosts_file_gets_doctor_to_say_chattr_minus_i_and_why() throws {
        let scratch = try Scratch()
        let (helper, hosts) = try H.instagramBlocked(scratch)
        defer { helper.stop() }
        let before = H.bytes(hosts)
        guard Self.chattr("+i", hosts) else {
            Issue.record("chattr +i failed on \(hosts): needs root and a file system with inode flags")
            return
        }
        defer { _ = Self.chattr("-i", hosts) }
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        let failing = try Poll.until(seconds: 5) { (try? Self.hostsCheck(helper).status) == "fail" }
        #expect(failing, "\(helper.child.stderr)")
        let check = try Self.hostsCheck(helper)
        #expect(check.detail.contains("marked immutable (`chattr +i`"), "\(check)")
        #expect(check.fix.contains("sudo chattr -i \(hosts)") && !check.fix.contains("ReadWritePaths"), "\(check)")
        #expect(helper.child.stderr.contains("sudo chattr -i \(hosts)"), "\(helper.child.stderr)")
        #expect(H.bytes(hosts) == before, "an immutable file changed")

        #expect(Self.chattr("-i", hosts))
        // A rule change wakes the helper at once (a flag change wakes no inotify watch).
        #expect(try helper.cli(["block", "youtube"]).exitCode == 0)
        let written = try Poll.until(seconds: 10) { H.has(hosts, "0.0.0.0 tiktok.com\n") }
        #expect(written, "\(H.text(hosts)) \(helper.child.stderr)")
        #expect((try FileManager.default.attributesOfItem(atPath: hosts)[.posixPermissions] as? Int) == 0o644)
    }
}
