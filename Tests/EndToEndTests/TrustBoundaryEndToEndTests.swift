import Foundation
import TestSupport
import Testing

/// SPEC §11: folders and sockets that others control are refused, one
/// helper per state folder (locked before anything is opened or bound), root's `clock reset`, and a
/// spend across a kill -9. As people run it: the helper and the CLI as root, a member or another
/// user (uid 65534, `setpriv`) on the other side.
@Suite struct TrustBoundaryEndToEndTests {
    static let otherUID: uid_t = 65534

    /// Starts `scrolloff-dns start` on a fixed free port and waits for it to exit (at most 20 s).
    static func startRefused(scratch: Scratch, state: String, socket: String, port: Int, upstream: Int) throws -> Outcome {
        try HelperLaunch(
            executable: Products.scrolloffDNS, listen: [HelperLaunch.loopback(port)], upstreams: [HelperLaunch.loopback(upstream)],
            stateDirectory: state, controlSocket: socket, webListen: "off", wrappers: [.timeout(seconds: 20)]
        ).outcome()
    }

    /// Whether UDP and TCP port `port` on 127.0.0.1 can be bound right now.
    static func portIsFree(_ port: Int) -> Bool {
        var free = true
        for type in [Int32(SOCK_DGRAM.rawValue), Int32(SOCK_STREAM.rawValue)] {
            let fd = socket(AF_INET, type, 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            free = free && bound
        }
        return free
    }

    static func folder(_ scratch: Scratch, _ name: String, owner: uid_t = 0, mode: mode_t = 0o700) throws -> String {
        let path = "\(scratch.path)/\(name)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard chown(path, owner, gid_t(owner)) == 0, chmod(path, mode) == 0 else {
            throw HarnessError("cannot set up \(path): \(String(cString: strerror(errno)))")
        }
        return path
    }

    // MARK: folders others control

    struct FolderCase: Sendable, CustomTestStringConvertible {
        var name: String
        /// Makes the folders; returns the state folder and the control socket.
        var make: @Sendable (Scratch) throws -> (state: String, socket: String)
        var expected: [String]
        var testDescription: String { name }
    }

    static let folderCases: [FolderCase] = [
        FolderCase(name: "state folder owned by another user", make: { scratch in
            (try TrustBoundaryEndToEndTests.folder(scratch, "state", owner: TrustBoundaryEndToEndTests.otherUID), "\(scratch.path)/control.sock")
        }, expected: ["belongs to user nobody (uid 65534)", "sudo chown root:root", "chmod 0700"]),
        FolderCase(name: "group-writable state folder", make: { scratch in
            (try TrustBoundaryEndToEndTests.folder(scratch, "state", mode: 0o770), "\(scratch.path)/control.sock")
        }, expected: ["(mode 770) can be written by users other than its owner", "chmod 0700"]),
        FolderCase(name: "world-writable sticky state folder", make: { scratch in
            (try TrustBoundaryEndToEndTests.folder(scratch, "state", mode: 0o1777), "\(scratch.path)/control.sock")
        }, expected: ["(mode 1777) can be written", "chmod 0700"]),
        FolderCase(name: "state folder inside another user's folder", make: { scratch in
            _ = try TrustBoundaryEndToEndTests.folder(scratch, "theirs", owner: TrustBoundaryEndToEndTests.otherUID, mode: 0o755)
            return (try TrustBoundaryEndToEndTests.folder(scratch, "theirs/state"), "\(scratch.path)/control.sock")
        }, expected: ["lies inside", "theirs, which belongs to user nobody", "chmod 0755"]),
        FolderCase(name: "state folder reached through another user's symbolic link", make: { scratch in
            // The folder it leads to is root's and 0700: only the link's owner is wrong, and they
            // could point it at an empty folder before the next start (every rule gone).
            let real = try TrustBoundaryEndToEndTests.folder(scratch, "real-state")
            let link = "\(scratch.path)/state-link"
            guard symlink(real, link) == 0, lchown(link, TrustBoundaryEndToEndTests.otherUID, gid_t(TrustBoundaryEndToEndTests.otherUID)) == 0 else {
                throw HarnessError("cannot make \(link): \(String(cString: strerror(errno)))")
            }
            return (link, "\(scratch.path)/control.sock")
        }, expected: ["is a symbolic link owned by user nobody (uid 65534)", "sudo ln -s", "--state-dir"]),
        FolderCase(name: "socket folder owned by another user", make: { scratch in
            (try TrustBoundaryEndToEndTests.folder(scratch, "state"), "\(try TrustBoundaryEndToEndTests.folder(scratch, "run", owner: TrustBoundaryEndToEndTests.otherUID, mode: 0o755))/control.sock")
        }, expected: ["control socket's folder", "belongs to user nobody", "--control-socket"]),
        FolderCase(name: "socket folder not made yet inside a world-writable folder", make: { scratch in
            (try TrustBoundaryEndToEndTests.folder(scratch, "state"), "\(try TrustBoundaryEndToEndTests.folder(scratch, "open", mode: 0o777))/scrolloff/control.sock")
        }, expected: ["control socket's folder", "(mode 777)", "chmod 0755"]),
    ]

    @Test(arguments: folderCases)
    func a_folder_others_can_change_stops_the_start_with_the_fix_and_nothing_opened_or_bound(_ c: FolderCase) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let (state, socket) = try c.make(scratch)
        let port = try FreePort.pick()
        let start = try Self.startRefused(scratch: scratch, state: state, socket: socket, port: port, upstream: upstream.port)
        #expect(start.exitCode != 0 && start.exitCode != 124, "\(start)")
        for text in c.expected { #expect(start.output.contains(text), "\(text) in: \(start)") }
        #expect(!start.output.contains("listening"), "\(start)")
        #expect(!FileManager.default.fileExists(atPath: "\(state)/scrolloff.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(Self.portIsFree(port))
    }

    @Test func folders_root_owns_and_a_sticky_tmp_above_them_are_accepted() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        // The scratch folder sits in /tmp (root's, sticky, world-writable): that parent is fine.
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }
        #expect(try helper.cli(["status"]).exitCode == 0)
    }

    // MARK: one helper per state folder

    @Test func a_second_helper_on_a_running_helpers_state_folder_stops_before_binding_and_the_first_keeps_serving() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let first = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { first.stop() }
        #expect(try first.cli(["block", "instagram"]).exitCode == 0)

        let port = try FreePort.pick()
        let second = try Self.startRefused(scratch: scratch, state: first.stateDirectory, socket: "\(scratch.path)/second.sock",
                                           port: port, upstream: upstream.port)
        #expect(second.exitCode != 0 && second.exitCode != 124, "\(second)")
        #expect(second.output.contains("another scrolloff-dns (pid \(first.child.process.pid)) uses \(first.stateDirectory)"), "\(second)")
        #expect(!second.output.contains("listening"), "\(second)")
        #expect(Self.portIsFree(port))
        #expect(!FileManager.default.fileExists(atPath: "\(scratch.path)/second.sock"))
        // The first is untouched: it answers DNS and the CLI, and its rules hold.
        #expect(first.child.isRunning)
        #expect(try shortA(first.port, "www.instagram.com") == "0.0.0.0")
        #expect(try shortA(first.port, "fwd.test") == "10.1.2.3")
        #expect(try first.cli(["status"]).exitCode == 0)
        // Killed, the lock goes with the process: the next start takes the folder at once.
        try first.restart(signal: SIGKILL)
        #expect(try shortA(first.port, "www.instagram.com") == "0.0.0.0")
    }

    // MARK: a socket someone else serves

    /// A socket in a folder another user owns, served by that user: root's `scrolloff block` with a
    /// reason must not reach it. The fake server logs every byte it receives.
    @Test func the_cli_refuses_a_socket_served_by_another_user_and_sends_it_nothing() throws {
        let scratch = try Scratch()
        let folder = try Self.folder(scratch, "fake", owner: Self.otherUID, mode: 0o755)
        let socketPath = "\(folder)/control.sock", log = "\(folder)/received.log"
        let script = try scratch.file("fake_helper.py", """
            import os, socket, sys
            path, log = sys.argv[1], sys.argv[2]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            os.chmod(path, 0o666)
            s.listen(8)
            print("ready", flush=True)
            for _ in range(20):
                c, _ = s.accept()
                c.settimeout(2)
                data = b""
                try:
                    while b"\\r\\n\\r\\n" not in data:
                        chunk = c.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\n{}")
                except OSError:
                    pass
                with open(log, "ab") as f:
                    f.write(data)
                c.close()
            """)
        chmod(script, 0o644)
        let fake = try Child("/usr/bin/setpriv", ["--reuid=\(Self.otherUID)", "--regid=\(Self.otherUID)", "--clear-groups",
                                                  "/usr/bin/python3", script, socketPath, log], scratch: scratch, label: "fake-helper")
        _ = try fake.waitForLine { $0 == "ready" }

        let block = try runWithStatus(Products.scrolloff, ["block", "instagram", "--reason", "my private reason", "--socket", socketPath])
        #expect(block.exitCode == 3, "\(block)")
        #expect(block.output.contains("is served by user nobody (uid 65534), not by root or you"), "\(block)")
        #expect(block.output.contains("nothing was sent to it"), "\(block)")
        let json = try runWithStatus(Products.scrolloff, ["status", "--json", "--socket", socketPath])
        #expect(json.exitCode == 3 && json.output.contains("\"untrusted_socket\""), "\(json)")
        let doctor = try runWithStatus(Products.scrolloff, ["doctor", "--socket", socketPath])
        #expect(doctor.output.contains("not by root or you"), "\(doctor)")
        // Not a byte reached it (a connection was made and closed: the kernel says who serves only then).
        let received = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!received.contains("my private reason") && !received.contains("instagram"), "\(received)")
        #expect(received.isEmpty, "\(received)")

        // The same user's own CLI may talk to it: a `make run` helper is its user's.
        let own = try runWithStatus("/usr/bin/setpriv", ["--reuid=\(Self.otherUID)", "--regid=\(Self.otherUID)", "--clear-groups",
                                                         Products.scrolloff, "status", "--json", "--socket", socketPath])
        #expect(!own.output.contains("untrusted_socket"), "\(own)")
    }

    // MARK: clock reset

    /// The first start ever runs with the wall clock 3 h ahead (libfaketime, wall clock only); the
    /// next, with the real clock, keeps the trusted clock 3 h ahead (this host's kernel does not
    /// report NTP sync, and none is faked). `doctor` says what to run; a member cannot; root can,
    /// with the helper stopped; the start after it runs on the system clock, a tamper event says so.
    @Test func root_resets_a_trusted_clock_left_three_hours_ahead_and_a_member_cannot() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let offset = try scratch.file("clock", "+3h\n")
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port, environment: FakeClock.wallOnly(timestampFile: offset))
        defer { helper.stop() }
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        try helper.restart()

        func trustedAhead() throws -> Int {
            let status = try jsonObject(try helper.cli(["status", "--json"]).output)
            let now = try #require(status["now"] as? String)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = try #require(formatter.date(from: now) ?? ISO8601DateFormatter().date(from: now), "\(now)")
            return Int(date.timeIntervalSinceNow.rounded())
        }
        let ahead = try trustedAhead()
        #expect(ahead > 3 * 3600 - 120 && ahead < 3 * 3600 + 120, "trusted clock \(ahead) s ahead")
        let doctor = try helper.cli(["doctor"])
        #expect(doctor.output.contains("behind the trusted clock"), "\(doctor)")
        #expect(doctor.output.contains("sudo scrolloff-dns clock reset"), "\(doctor)")

        let reset = ["clock", "reset", "--state-dir", helper.stateDirectory]
        let running = try runWithStatus(Products.scrolloffDNS, reset)
        #expect(running.exitCode != 0 && running.output.contains("is running on \(helper.stateDirectory)"), "\(running)")
        helper.stop()
        let (launcher, prefix) = try PrivilegeMode.ordinaryUser.launcher()
        let member = try runWithStatus(launcher, prefix + reset)
        #expect(member.exitCode != 0 && member.output.contains("Only root may reset the helper's trusted clock"), "\(member)")
        let byRoot = try runWithStatus(Products.scrolloffDNS, reset)
        #expect(byRoot.exitCode == 0 && byRoot.output.contains("The trusted clock now reads the system clock"), "\(byRoot)")
        #expect(byRoot.output.contains("180 min ahead") || byRoot.output.contains("179 min ahead") || byRoot.output.contains("181 min ahead"), "\(byRoot)")

        try helper.restart()
        #expect(abs(try trustedAhead()) < 60)
        let events = try helper.cli(["events", "--json"])
        #expect(events.output.contains("Root reset the trusted clock to the system clock"), "\(events)")
        let after = try helper.cli(["doctor"])
        #expect(!after.output.contains("behind the trusted clock"), "\(after)")
        // The block's lock keeps its absolute instant: still locked, now on the right clock.
        #expect(try shortA(helper.port, "www.instagram.com") == "0.0.0.0")
    }

    // MARK: kill -9 mid-spend

    /// SPEC §4: a spend running when the helper is killed is charged up to the helper's last
    /// commit and ends there; the 6 s it was down are not charged, and the entry does not reopen.
    @Test func a_kill_9_mid_spend_then_a_restart_6_seconds_later_charges_nothing_for_the_downtime() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        #expect(try helper.cli(["use", "instagram"]).exitCode == 0)
        #expect(try shortA(helper.port, "www.instagram.com") == "10.20.30.40")
        usleep(1_000_000)
        helper.stop(signal: SIGKILL)
        usleep(6_000_000)
        try helper.restart()

        let wallet = try jsonObject(try helper.cli(["wallet", "--json"]).output)
        let balance = try #require(wallet["balance_seconds"] as? Int, "\(wallet)")
        // The starter 2 min less at most the second before the kill: not the 7 s and more of the old charge.
        #expect(balance >= 118, "balance \(balance)")
        #expect(try shortA(helper.port, "www.instagram.com") == "0.0.0.0")
        #expect(try sqlite(helper.database, "SELECT COUNT(*) FROM grants WHERE end_reason = 'helperStopped'") == "1")
        #expect(try sqlite(helper.database, "SELECT SUM(delta_seconds) FROM ledger WHERE profile = 'default'") == "\(balance)")
        // Opened again, it charges from then on.
        #expect(try helper.cli(["use", "instagram"]).exitCode == 0)
        #expect(try shortA(helper.port, "www.instagram.com") == "10.20.30.40")
    }
}
