import Foundation
import TestSupport
import Testing

/// Start-up, listening, privacy of the log and shutdown of `scrolloff-dns start` (SPEC §9, §13).
@Suite struct ServiceEndToEndTests {
    @Test func listens_on_ipv4_and_ipv6_and_stops_cleanly_on_sigterm_without_logging_names() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let child = try HelperLaunch(
            executable: Products.scrolloffDNS, listen: ["127.0.0.1:0", "[::1]:0"], upstreams: [HelperLaunch.loopback(upstream.port)],
            stateDirectory: "\(scratch.path)/state", controlSocket: "\(scratch.path)/control.sock", mode: .dns
        ).spawn(scratch: scratch, label: "sinkhole")
        let port4 = try child.listeningPort()
        let port6 = try child.listeningPort(on: "[::1]")
        _ = try child.listeningPort("tcp", on: "[::1]")
        #expect(try dig(port4, ["+short", "host.test"]).contains("10.0.0.7"))
        let six = try run("/usr/bin/dig", ["@::1", "-p", "\(port6)", "+time=5", "+tries=1", "+short", "fwd.test"])
        #expect(six.contains("10.1.2.3"), "\(six)")
        let sixTCP = try run("/usr/bin/kdig", ["@::1", "-p", "\(port6)", "+tcp", "+short", "host.test"])
        #expect(sixTCP.contains("10.0.0.7"), "\(sixTCP)")

        child.signal(SIGTERM)
        let status = child.process.wait()
        #expect(status == 0, "exit status \(status): \(child.stderr)")
        let log = child.stderr
        #expect(log.contains("scrolloff-dns stopped"), "\(log)")
        // SPEC §9 privacy: allowed queries are never logged.
        #expect(!log.contains("host.test") && !log.contains("fwd.test"), "\(log)")
    }

    @Test func sigterm_drains_questions_already_sent_upstream() throws {
        let scratch = try Scratch()
        let upstream = try ScriptedUpstream(.slow, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let output = try python(server.port, """
            import os, signal, socket, time, dns.message
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(3)
            s.sendto(dns.message.make_query("late.test", "A").to_wire(), ("127.0.0.1", PORT))
            time.sleep(0.1)  # the question is now with the slow upstream (400 ms)
            os.kill(\(server.child.process.pid), signal.SIGTERM)
            print(dns.message.from_wire(s.recv(4096)).answer[0][0].address)
            """, scratch: scratch)
        #expect(output == "192.0.2.1\n", "\(output)")
        #expect(server.child.process.wait() == 0)
    }

    @Test func a_busy_port_fails_with_a_message_that_says_what_to_do() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let child = try HelperLaunch(
            executable: Products.scrolloffDNS, listen: [HelperLaunch.loopback(upstream.port)], upstreams: [HelperLaunch.loopback(upstream.port)],
            stateDirectory: "\(scratch.path)/state", controlSocket: "\(scratch.path)/control.sock"
        ).spawn(scratch: scratch, label: "sinkhole")
        let status = child.process.wait()
        #expect(status != 0)
        #expect(child.stderr.contains("cannot listen on"), "\(child.stderr)")
    }

    @Test func unknown_modes_and_bad_addresses_are_usage_errors() throws {
        let scratch = try Scratch()
        // The command line by hand, not HelperLaunch: the point is `start` with one bad flag and nothing else.
        for arguments in [["--mode", "firewall"], ["--listen", "localhost:53"], ["--upstream", "1.2.3.4:99999"]] {
            let child = try Child(Products.scrolloffDNS, ["start"] + arguments, scratch: scratch, label: "usage-\(UUID().uuidString)")
            let status = child.process.wait()
            // swift-argument-parser exits with 64 (EX_USAGE) for validation errors.
            #expect(status >> 8 == 64, "\(arguments): \(status) \(child.stderr)")
        }
    }
}
