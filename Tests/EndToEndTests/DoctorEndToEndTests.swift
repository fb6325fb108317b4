import Foundation
import Testing

/// `scrolloff doctor` (SPEC §11) through the real binaries: the real helper on a spare loopback
/// address at port 53 (the tests run as root), a dnsmasq upstream, and a resolv.conf of the test's
/// own passed with `--resolv-conf`. Each test listens on its own 127.0.0.x, so they run in parallel.
@Suite struct DoctorEndToEndTests {
    /// A finished `scrolloff doctor`: its exit code and its two streams apart, so `--json` parses.
    struct Run: CustomStringConvertible {
        let exitCode: Int32
        let stdout: String
        let stderr: String
        var description: String { "exit \(exitCode)\n\(stdout)\(stderr)" }

        /// The check line for `name` (`PASS  resolver  …`), and the fix line under it, if any.
        func line(_ name: String) -> (text: String, fix: String?)? {
            let lines = stdout.split(separator: "\n").map(String.init)
            guard let index = lines.firstIndex(where: { $0.dropFirst(6).hasPrefix(name + " ") }) else { return nil }
            let next = index + 1 < lines.count ? lines[index + 1] : ""
            let fix = next.trimmingCharacters(in: .whitespaces).hasPrefix("fix: ") ? next : nil
            return (lines[index], fix)
        }
    }

    static let checkNames = ["helper", "listeners", "resolver", "blocked_probe", "normal_probe", "upstreams", "lists", "canary", "clock", "database"]

    func doctor(_ arguments: [String]) throws -> Run {
        let out = NSTemporaryDirectory() + "scrolloff-doctor-out-" + UUID().uuidString
        let err = NSTemporaryDirectory() + "scrolloff-doctor-err-" + UUID().uuidString
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        // This machine's nsswitch.conf must not decide the verdicts: an empty one means glibc's default (dns).
        let own = arguments.contains("--nsswitch-conf") ? arguments : arguments + ["--nsswitch-conf", "/dev/null"]
        let status = try Spawned(Products.scrolloff, ["doctor"] + own, stdout: out, stderr: err).wait()
        // WIFEXITED / WEXITSTATUS by hand: the C macros are not imported into Swift.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
        return Run(exitCode: code, stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                   stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// The real helper with a second listener on `address`:53, waited for until it is bound.
    func sinkhole(on address: String, scratch: Scratch, upstream: Dnsmasq) throws -> Sinkhole {
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--listen", "\(address):53"])
        _ = try server.child.waitForLine { $0 == "listening tcp \(address):53" }
        return server
    }

    @Test func every_check_passes_against_a_running_helper_the_resolver_points_at() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try sinkhole(on: "127.0.0.88", scratch: scratch, upstream: upstream)
        let blocked = try run(Products.scrolloff, ["block", "instagram", "--socket", server.controlSocket])
        #expect(blocked.contains("Blocked instagram"), "\(blocked)")
        let resolvConf = try scratch.file("resolv.conf", "# written by the test\nnameserver 127.0.0.88\n")
        let arguments = ["--socket", server.controlSocket, "--resolv-conf", resolvConf, "--probe-name", "host.test"]

        let human = try doctor(arguments)
        #expect(human.exitCode == 0, "\(human)")
        for name in Self.checkNames {
            let line = try #require(human.line(name), "no \(name) line in \(human)")
            #expect(line.text.hasPrefix("PASS  \(name) "), "\(line.text)")
            #expect(line.fix == nil)
        }
        #expect(human.line("listeners")?.text.contains("4 listeners answer") == true, "udp and tcp on both addresses: \(human)")
        #expect(human.line("resolver")?.text.contains("→ 127.0.0.88: the sinkhole") == true)
        #expect(human.line("blocked_probe")?.text.contains("(blocked by instagram) → NOERROR 0.0.0.0 in") == true, "\(human)")
        #expect(human.line("normal_probe")?.text.contains("host.test → 10.0.0.7") == true)
        #expect(human.line("canary")?.text.contains("NXDOMAIN through 127.0.0.88") == true)
        #expect(human.stdout.contains("All 10 checks pass"))

        let json = try doctor(arguments + ["--json"])
        #expect(json.exitCode == 0, "\(json)")
        let object = try jsonObject(json.stdout)
        #expect(object["ok"] as? Bool == true)
        let checks = try #require(object["checks"] as? [[String: Any]])
        #expect(checks.map { $0["name"] as? String } == Self.checkNames)
        for check in checks {
            #expect(Set(check.keys) == ["name", "status", "detail", "fix"])
            #expect(check["status"] as? String == "pass")
            #expect(check["fix"] is NSNull)
            #expect((check["detail"] as? String)?.isEmpty == false)
        }
        // The blocked probe was answered by the sinkhole itself: a blocked name never goes upstream.
        let upstreamLog = (try? String(contentsOfFile: upstream.logPath, encoding: .utf8)) ?? ""
        #expect(!upstreamLog.contains("instagram"), "\(upstreamLog)")
    }

    @Test func a_stopped_helper_fails_with_how_to_start_it_and_exit_1() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        server.child.signal(SIGTERM)
        server.child.process.wait()
        let resolvConf = try scratch.file("resolv.conf", "nameserver 127.0.0.90\n")
        let arguments = ["--socket", server.controlSocket, "--resolv-conf", resolvConf]

        let human = try doctor(arguments)
        #expect(human.exitCode == 1, "\(human)")
        let helper = try #require(human.line("helper"), "\(human)")
        #expect(helper.text.hasPrefix("FAIL  helper "))
        #expect(helper.fix?.contains("sudo systemctl start scrolloff-dns") == true, "\(human)")
        #expect(helper.fix?.contains("make run") == true)
        for name in ["listeners", "resolver", "blocked_probe", "normal_probe", "lists", "clock", "database"] {
            #expect(human.line(name)?.text.contains("FAIL  \(name)") == true && human.line(name)?.text.contains("needs the helper") == true, "\(name): \(human)")
        }
        // The canary needs no helper; with nothing on 127.0.0.90 it fails on its own terms.
        #expect(human.line("canary")?.text.contains("got no answer through 127.0.0.90") == true, "\(human)")
        #expect(human.line("clock")?.fix?.contains("Start the helper first") == true, "\(human)")

        let json = try doctor(arguments + ["--json"])
        #expect(json.exitCode == 1)
        let object = try jsonObject(json.stdout)
        #expect(object["ok"] as? Bool == false)
        let first = try #require((object["checks"] as? [[String: Any]])?.first)
        #expect(first["name"] as? String == "helper" && first["status"] as? String == "fail")
        #expect((first["fix"] as? String)?.contains("sudo systemctl start scrolloff-dns") == true)
    }

    @Test func a_resolver_pointing_elsewhere_fails_with_the_line_to_write() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try sinkhole(on: "127.0.0.89", scratch: scratch, upstream: upstream)
        let elsewhere = try scratch.file("resolv.conf", "nameserver 127.0.0.99\n")
        let run = try doctor(["--socket", server.controlSocket, "--resolv-conf", elsewhere, "--probe-name", "host.test"])
        #expect(run.exitCode == 1, "\(run)")
        let resolver = try #require(run.line("resolver"), "\(run)")
        #expect(resolver.text.hasPrefix("FAIL  resolver "))
        #expect(resolver.text.contains("→ 127.0.0.99, not the sinkhole"), "\(resolver.text)")
        #expect(resolver.fix?.contains("echo 'nameserver 127.0.0.89' | sudo tee /etc/resolv.conf") == true, "\(run)")
        #expect(run.line("canary")?.text.hasPrefix("FAIL  canary ") == true, "browsers would ask 127.0.0.99: \(run)")
        // Nothing is blocked, so the reserved probe name is asked, and the sinkhole still works.
        #expect(run.line("blocked_probe")?.text.contains("PASS  blocked_probe  doctor-probe.scrolloff.invalid (the reserved probe name: nothing is blocked for profile default now) → NOERROR 0.0.0.0") == true, "\(run)")
        #expect(run.line("helper")?.text.hasPrefix("PASS") == true)
        #expect(run.stdout.contains("8 of 10 checks pass"), "\(run)")

        // Through systemd-resolved's stub, whose servers name the sinkhole, the same setup passes.
        let stub = try scratch.file("stub-resolv.conf", "nameserver 127.0.0.53\noptions edns0 trust-ad\n")
        let resolved = try scratch.file("resolved-resolv.conf", "nameserver 127.0.0.89\n")
        let viaStub = try doctor(["--socket", server.controlSocket, "--resolv-conf", stub, "--resolved-conf", resolved, "--probe-name", "host.test"])
        #expect(viaStub.line("resolver")?.text.contains("PASS  resolver") == true, "\(viaStub)")
        #expect(viaStub.line("resolver")?.text.contains("systemd-resolved → 127.0.0.89: the sinkhole") == true, "\(viaStub)")
    }

    @Test func resolved_with_tilde_dot_at_the_sinkhole_passes_though_a_link_keeps_its_dhcp_server() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try sinkhole(on: "127.0.0.85", scratch: scratch, upstream: upstream)
        // A stand-in for resolvectl, answering each verb as systemd 252 prints it.
        let resolvectl = try scratch.file("resolvectl", """
            #!/bin/sh
            case "$1" in
            dns) printf 'Global: 127.0.0.85\nLink 2 (eth0): 192.168.1.1\nLink 3 (wlan0):\n' ;;
            domain) printf 'Global: ~.\nLink 2 (eth0): lan\nLink 3 (wlan0):\n' ;;
            default-route) printf 'Link 2 (eth0): yes\nLink 3 (wlan0): yes\n' ;;
            *) exit 1 ;;
            esac
            """)
        chmod(resolvectl, 0o755)
        let stub = try scratch.file("stub-resolv.conf", "nameserver 127.0.0.53\n")
        let arguments = ["--socket", server.controlSocket, "--resolv-conf", stub, "--resolvectl", resolvectl, "--probe-name", "host.test"]

        // Only the resolver line: the canary asks 127.0.0.53 itself, and no resolved runs here.
        let passing = try doctor(arguments)
        #expect(passing.line("resolver")?.text.hasPrefix("PASS  resolver ") == true, "\(passing)")
        #expect(passing.line("resolver")?.text.contains("systemd-resolved → 127.0.0.85: the sinkhole (192.168.1.1 only for its link's own domains)") == true, "\(passing)")

        // glibc asking resolved through nss-resolve: resolv.conf naming another server no longer matters.
        let nsswitch = try scratch.file("nsswitch.conf", "hosts: files resolve [!UNAVAIL=return] dns myhostname\n")
        let router = try scratch.file("router-resolv.conf", "nameserver 127.0.0.99\n")
        let viaNSS = try doctor(["--socket", server.controlSocket, "--resolv-conf", router, "--nsswitch-conf", nsswitch,
                                 "--resolvectl", resolvectl, "--probe-name", "host.test"])
        #expect(viaNSS.exitCode == 0, "\(viaNSS)")
        #expect(viaNSS.line("resolver")?.text.hasPrefix("PASS  resolver ") == true, "\(viaNSS)")
        #expect(viaNSS.line("resolver")?.text.contains("\(nsswitch) → systemd-resolved → 127.0.0.85: the sinkhole") == true, "\(viaNSS)")
        #expect(viaNSS.line("canary")?.text.contains("NXDOMAIN through 127.0.0.85") == true, "\(viaNSS)")
        // Without nss-resolve the same resolv.conf is what glibc asks.
        #expect(try doctor(["--socket", server.controlSocket, "--resolv-conf", router, "--resolvectl", resolvectl]).exitCode == 1)
    }

    @Test func a_vpn_link_with_its_own_tilde_dot_fails_the_resolver_check() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try sinkhole(on: "127.0.0.84", scratch: scratch, upstream: upstream)
        let resolvectl = try scratch.file("resolvectl", """
            #!/bin/sh
            case "$1" in
            dns) printf 'Global: 127.0.0.84\nLink 2 (eth0): 192.168.1.1\nLink 5 (tun0): 10.8.0.1\n' ;;
            domain) printf 'Global: ~.\nLink 2 (eth0): lan\nLink 5 (tun0): ~.\n' ;;
            default-route) printf 'Link 2 (eth0): yes\nLink 5 (tun0): no\n' ;;
            *) exit 1 ;;
            esac
            """)
        chmod(resolvectl, 0o755)
        let stub = try scratch.file("stub-resolv.conf", "nameserver 127.0.0.53\n")
        let run = try doctor(["--socket", server.controlSocket, "--resolv-conf", stub, "--resolvectl", resolvectl, "--probe-name", "host.test"])
        #expect(run.exitCode == 1, "\(run)")
        let resolver = try #require(run.line("resolver"), "\(run)")
        #expect(resolver.text.hasPrefix("FAIL  resolver "), "\(run)")
        #expect(resolver.text.contains("\(stub) → systemd-resolved also asks 10.8.0.1 of Link 5 (tun0), which takes every name (`~.`) besides the sinkhole"), "\(run)")
        #expect(resolver.fix?.contains("Give Link 5 (tun0) the sinkhole as DNS server too, or take `~.` off its DNS domains") == true, "\(run)")
    }

    @Test func a_helper_forwarding_to_resolveds_stub_that_points_back_fails_as_a_forwarding_loop() throws {
        let scratch = try Scratch()
        let server = try Sinkhole(scratch: scratch, upstreams: [], extra: ["--listen", "127.0.0.83:53", "--upstream", "127.0.0.53"])
        _ = try server.child.waitForLine { $0 == "listening tcp 127.0.0.83:53" }
        let stub = try scratch.file("stub-resolv.conf", "nameserver 127.0.0.53\n")
        let resolved = try scratch.file("resolved-resolv.conf", "nameserver 127.0.0.83\n")
        let run = try doctor(["--socket", server.controlSocket, "--resolv-conf", stub, "--resolved-conf", resolved, "--json"])
        #expect(run.exitCode == 1, "\(run)")
        let checks = try #require(try jsonObject(run.stdout)["checks"] as? [[String: Any]], "\(run)")
        let normal = try #require(checks.first { $0["name"] as? String == "normal_probe" }, "\(run)")
        #expect(normal["status"] as? String == "fail")
        #expect((normal["detail"] as? String)?.contains("the helper forwards to 127.0.0.53 (systemd-resolved), which sends it back to the sinkhole at 127.0.0.83") == true, "\(normal)")
        #expect((normal["fix"] as? String)?.hasPrefix("forwarding loop: set `[dns] upstreams = [...]` in /etc/scrolloff/scrolloff.toml") == true, "\(normal)")
        // The resolver itself is right: resolved does send names to the sinkhole.
        #expect(checks.first { $0["name"] as? String == "resolver" }?["status"] as? String == "pass", "\(run)")
    }

    @Test func a_list_older_than_twice_its_period_fails_with_the_update_command() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        let source = try scratch.file("old-source.txt", "tracker.example\nads.example\n")
        let added = try helper.cli(["lists", "add", "file://" + source, "--name", "old"])
        #expect(added.exitCode == 0, "\(added)")
        helper.stop()

        // Move the list's last refresh three days back, and take its source away so the refresh
        // the helper tries at start fails: the copy stays in force but is now stale.
        let metadataPath = helper.stateDirectory + "/lists/old.json"
        var metadata = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: metadataPath))) as? [String: Any])
        let threeDaysAgo = Int64((Date().timeIntervalSince1970 - 3 * 86_400) * 1000)
        for key in ["lastSuccess", "lastAttempt", "lastChanged"] { metadata[key] = ["millisecondsSince1970": threeDaysAgo] }
        try JSONSerialization.data(withJSONObject: metadata).write(to: URL(fileURLWithPath: metadataPath))
        try FileManager.default.removeItem(atPath: source)
        try helper.restart()

        let resolvConf = try scratch.file("resolv.conf", "nameserver 127.0.0.91\n")
        let run = try doctor(["--socket", helper.controlSocket, "--resolv-conf", resolvConf])
        #expect(run.exitCode == 1, "\(run)")
        let list = try #require(run.line("list:old"), "\(run)")
        #expect(list.text.hasPrefix("FAIL  list:old "))
        #expect(list.text.contains("old was last refreshed 3 d ago, more than twice its period of 24 h"), "\(list.text)")
        #expect(list.fix?.hasSuffix("fix: `scrolloff lists update old`") == true, "\(run)")
        let database = try #require(run.line("database"), "\(run)")
        #expect(database.text.hasPrefix("PASS  database ") && database.text.contains("PRAGMA quick_check: ok (\(helper.database))"), "\(run)")
        #expect(run.line("clock")?.text.hasPrefix("PASS  clock ") == true, "\(run)")
    }
}
