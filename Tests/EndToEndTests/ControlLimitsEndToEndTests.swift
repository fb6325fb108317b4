import Foundation
import TestSupport
import Testing

/// The control socket's connection bounds and the accept back-off at the descriptor limit
/// (SPEC §9: 19,985 idle connections from one member of group `scrolloff` took every descriptor
/// of the helper; forwarded queries failed, TCP DNS timed out, `status` took over 10 s, and
/// nothing was logged).
@Suite struct ControlLimitsEndToEndTests {
    /// Opens up to `count` connections to `socket` as fast as it can for at most `connecting`
    /// seconds, prints `HOLDING n`, keeps them `seconds`, then prints how many the helper closed
    /// meanwhile and exits.
    static let flood = """
        import os, resource, socket, sys, time
        path, count, seconds, connecting = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        # Descriptors inherited from the test process (other suites' sockets) count against the limit.
        count = min(count, hard - 64 - len(os.listdir("/proc/self/fd")))
        socks, deadline = [], time.time() + connecting
        while len(socks) < count and time.time() < deadline:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            except OSError:
                break  # out of descriptors after all (EMFILE): hold what is open
            s.settimeout(2)
            try:
                s.connect(path)
                socks.append(s)
            except OSError:
                # The backlog is full (EAGAIN): the helper has not accepted yet, or is backing off.
                s.close()
                time.sleep(0.001)
        print("HOLDING", len(socks), flush=True)
        time.sleep(seconds)
        closed = 0
        for s in socks:
            try:
                closed += s.recv(1, socket.MSG_DONTWAIT) == b""
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        print("CLOSED", closed, "OPEN", len(socks) - closed, flush=True)
        """

    /// The flood as uid 65534 with the socket file's group, as a member of group `scrolloff` would be.
    static func startFlood(
        _ server: Sinkhole, count: Int, seconds: Double, connecting: Double = 20, scratch: Scratch, asRoot: Bool = false, uid: Int = 65534
    ) throws -> Child {
        let script = try scratch.file("flood-\(UUID().uuidString).py", flood)
        let arguments = [script, server.controlSocket, "\(count)", "\(seconds)", "\(connecting)"]
        if asRoot { return try Child("/usr/bin/python3", arguments, scratch: scratch, label: "flood") }
        // The helper says it listens on DNS before the control socket is in place.
        var info = stat()
        for _ in 0..<100 where stat(server.controlSocket, &info) != 0 { Thread.sleep(forTimeInterval: 0.1) }
        guard stat(server.controlSocket, &info) == 0 else { throw HarnessError("no control socket at \(server.controlSocket)") }
        return try Child("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(info.st_gid)", "--clear-groups", "/usr/bin/python3"] + arguments,
                         scratch: scratch, label: "flood")
    }

    static func occurrences(_ text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }

    @Test func a_flood_of_idle_control_connections_from_one_user_leaves_dns_and_the_cli_working() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"])
        let flooder = try Self.startFlood(server, count: 20_000, seconds: 3, scratch: scratch)
        let holding = try flooder.waitForLine(seconds: 60) { $0.hasPrefix("HOLDING") }
        let started = Date()
        // While they are held: the CLI as root, forwarded and blocked UDP, TCP DNS.
        let status = try runWithStatus(Products.scrolloff, ["status", "--socket", server.controlSocket, "--json"])
        let statusSeconds = Date().timeIntervalSince(started)
        #expect(status.exitCode == 0, "\(status)")
        #expect(statusSeconds < 3, "status took \(statusSeconds) s")
        #expect(try shortA(server.port, "host.test") == "10.0.0.7")
        #expect(try shortA(server.port, "blocked.test") == "0.0.0.0")
        #expect(try kdig(server.port, ["+tcp", "+short", "fwd.test"]).contains("10.1.2.3"))
        let closed = try flooder.waitForLine(seconds: 20) { $0.hasPrefix("CLOSED") }
        // At most eight per uid (control_connections_per_user) stayed; every other one was closed
        // at once (and those eight after 5 s idle).
        let held = Int(holding.split(separator: " ")[1]) ?? 0
        let open = Int(closed.split(separator: " ").last ?? "") ?? -1
        #expect(held > 1000 && (0...8).contains(open), "\(holding); \(closed)")
        let log = server.child.stderr
        #expect(Self.occurrences("refusing control connections of uid 65534", in: log) == 1, "\(log)")
    }

    @Test func a_user_over_its_control_connections_is_told_why_and_root_is_still_served() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let config = try scratch.file("limits.toml", "[helper]\ncontrol_connections_per_user = 2\n")
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--config", config])
        let flooder = try Self.startFlood(server, count: 2, seconds: 3, scratch: scratch)
        _ = try flooder.waitForLine(seconds: 20) { $0.hasPrefix("HOLDING 2") }
        var info = stat()
        stat(server.controlSocket, &info)
        let refused = try runWithStatus(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=\(info.st_gid)", "--clear-groups", Products.scrolloff, "status", "--socket", server.controlSocket])
        #expect(refused.exitCode == 3, "\(refused)")
        #expect(refused.output.contains("helper.control_connections_per_user"), "\(refused)")
        let root = try runWithStatus(Products.scrolloff, ["status", "--socket", server.controlSocket])
        #expect(root.exitCode == 0, "\(root)")
    }

    @Test func members_of_the_group_holding_every_control_connection_do_not_lock_out_root() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        // Two users at their share take all of them: with the defaults, eight users (8 × 8 = 64).
        let config = try scratch.file("limits.toml", "[helper]\ncontrol_connections = 4\ncontrol_connections_per_user = 2\n")
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--config", config])
        let first = try Self.startFlood(server, count: 2, seconds: 4, scratch: scratch, uid: 65534)
        _ = try first.waitForLine(seconds: 20) { $0.hasPrefix("HOLDING 2") }
        let second = try Self.startFlood(server, count: 2, seconds: 4, scratch: scratch, uid: 65533)
        _ = try second.waitForLine(seconds: 20) { $0.hasPrefix("HOLDING 2") }
        let root = try runWithStatus(Products.scrolloff, ["status", "--socket", server.controlSocket])
        #expect(root.exitCode == 0, "\(root)\n\(server.child.stderr)")
    }

    /// Limits far above what 300 descriptors hold are lowered to fit at start (said once, with the
    /// numbers), and floods of both listeners meet those caps with descriptors to spare: running
    /// out would abort the process (libdispatch), and accepting never has to back off. The accept
    /// back-off and its one log line stay for a limit lowered from outside (`AcceptFailureLoggerTests`).
    @Test func connection_limits_beyond_the_descriptor_limit_are_lowered_and_floods_meet_them_with_descriptors_to_spare() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let config = try scratch.file("limits.toml", """
            [helper]
            control_connections = 4096
            control_connections_per_user = 4096
            [dns]
            tcp_connections = 4096
            tcp_connections_per_client = 4096
            """)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"], extra: ["--config", config],
            wrapper: [.command(["/usr/bin/prlimit", "--nofile=300:300", "--"])])
        let start = server.child.stderr
        #expect(Self.occurrences("they are lowered to fit", in: start) == 1, "\(start)")
        let controlCap = try #require(DescriptorLimitEndToEndTests.lowered("helper.control_connections", in: start), "\(start)")
        let perUserCap = try #require(DescriptorLimitEndToEndTests.lowered("helper.control_connections_per_user", in: start), "\(start)")
        let tcpCap = try #require(DescriptorLimitEndToEndTests.lowered("dns.tcp_connections", in: start), "\(start)")
        #expect(controlCap < 4096 && tcpCap < 4096 && controlCap + tcpCap < 300, "\(start)")
        let pid = server.child.process.pid
        func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1 }
        // 400 control connections from root for 3 s: the helper keeps its cap's worth (the members'
        // total and root's own share) and closes the rest.
        let flooder = try Self.startFlood(server, count: 400, seconds: 3, connecting: 3, scratch: scratch, asRoot: true)
        let holding = try flooder.waitForLine(seconds: 60) { $0.hasPrefix("HOLDING") }
        let duringControl = descriptors()
        #expect(try shortA(server.port, "blocked.test") == "0.0.0.0")
        #expect(try shortA(server.port, "host.test") == "10.0.0.7")
        #expect(try kdig(server.port, ["+tcp", "+short", "fwd.test"]).contains("10.1.2.3"))
        let closed = try flooder.waitForLine(seconds: 20) { $0.hasPrefix("CLOSED") }
        let open = Int(closed.split(separator: " ").last ?? "") ?? -1
        #expect(open <= controlCap + 2 * perUserCap, "\(holding); \(closed)")
        #expect(duringControl > 0 && duringControl <= 300 - 32, "\(duringControl) descriptors during the control flood")
        // The CLI works again at once.
        var status = try runWithStatus(Products.scrolloff, ["status", "--socket", server.controlSocket])
        for _ in 0..<20 where status.exitCode != 0 {
            Thread.sleep(forTimeInterval: 0.5)
            status = try runWithStatus(Products.scrolloff, ["status", "--socket", server.controlSocket])
        }
        #expect(status.exitCode == 0, "\(status)")
        // The same on the DNS-over-TCP listener: 400 connections held for 3 s.
        let tcpFlood = try python(server.port, """
            import os, socket, time, dns.message
            socks, deadline = [], time.time() + 3
            while len(socks) < 400 and time.time() < deadline:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.settimeout(0.5)
                try:
                    s.connect(("127.0.0.1", PORT))
                    socks.append(s)
                except OSError:
                    s.close()
            time.sleep(0.5)
            used = len(os.listdir("/proc/HELPER/fd"))
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(3)
            u.sendto(dns.message.make_query("blocked.test", "A").to_wire(), ("127.0.0.1", PORT))
            print("HELD", len(socks), "USED", used, "UDP", dns.message.from_wire(u.recv(512)).answer[0][0].address)
            time.sleep(3)
            """.replacingOccurrences(of: "HELPER", with: "\(pid)"), scratch: scratch)
        #expect(tcpFlood.hasSuffix("UDP 0.0.0.0\n"), "\(tcpFlood)")
        let used = tcpFlood.split(separator: " ").firstIndex(of: "USED").flatMap { index in Int(tcpFlood.split(separator: " ")[index + 1]) }
        #expect(used.map { $0 <= 300 - 32 } == true, "\(tcpFlood)")
        var tcp = try kdig(server.port, ["+tcp", "+short", "host.test"])
        for _ in 0..<10 where !tcp.contains("10.0.0.7") {
            Thread.sleep(forTimeInterval: 0.5)
            tcp = try kdig(server.port, ["+tcp", "+short", "host.test"])
        }
        #expect(tcp.contains("10.0.0.7"), "\(tcp)")
        #expect(server.child.isRunning, "\(server.child.stderr)")
        // Neither listener ever reached the descriptor limit.
        #expect(!server.child.stderr.contains("file descriptor limit is reached"), "\(server.child.stderr)")
    }
}
