#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// A listen port already taken: the helper exits non-zero and names who holds it (SPEC §13).
struct PortConflictEndToEndTests {
    func start(on port: Int, upstream: Int, scratch: Scratch) throws -> Child {
        try HelperLaunch(
            executable: Products.scrolloffDNS, listen: [HelperLaunch.loopback(port)], upstreams: [HelperLaunch.loopback(upstream)],
            stateDirectory: "\(scratch.path)/state-\(UUID().uuidString)", controlSocket: "\(scratch.path)/c-\(UUID().uuidString.prefix(8)).sock"
        ).spawn(scratch: scratch, label: "conflict-\(UUID().uuidString)")
    }

    @Test func a_dnsmasq_on_the_port_is_named_with_its_pid_and_the_fix() throws {
        let scratch = try Scratch()
        let dnsmasq = try Dnsmasq(scratch: scratch)
        let child = try start(on: dnsmasq.port, upstream: dnsmasq.port, scratch: scratch)
        #expect(child.process.wait() != 0)
        let message = child.stderr
        #expect(message.contains("cannot listen on udp 127.0.0.1:\(dnsmasq.port): the port is in use by dnsmasq (pid \(dnsmasq.child.process.pid)) on udp 127.0.0.1:\(dnsmasq.port)"), "\(message)")
        #expect(message.contains("systemctl disable --now dnsmasq"), "\(message)")
    }

    /// UDP binds beside it (same user, SO_REUSEPORT), so the TCP listener is what fails.
    @Test func another_scrolloff_dns_on_the_port_is_named_as_such() throws {
        let scratch = try Scratch()
        let dnsmasq = try Dnsmasq(scratch: scratch)
        let first = try Sinkhole(scratch: scratch, upstreams: [dnsmasq.port])
        let second = try start(on: first.port, upstream: dnsmasq.port, scratch: scratch)
        #expect(second.process.wait() != 0)
        let message = second.stderr
        #expect(message.contains("scrolloff-dns (pid \(first.child.process.pid))"), "\(message)")
        #expect(message.contains("Another scrolloff-dns already serves this address"), "\(message)")
        // The first one is untouched and still answers.
        #expect(try dig(first.port, ["+short", "host.test"]) == "10.0.0.7\n")
    }

    /// `--listen ADDR:0` never lands on a UDP port another program of the same user holds with
    /// SO_REUSEPORT. Linux's free-port search passes over such ports for a socket that already has
    /// SO_REUSEPORT, and the helper would then silently take a share of that program's datagrams
    /// (and it of the helper's). In a namespace whose only ephemeral port is held that way the
    /// helper must not start; with more ports in the range it serves on one of the others, and
    /// the holder hears nothing.
    @Test func port_0_never_lands_on_another_programs_shared_udp_port() throws {
        let scratch = try Scratch()
        let space = try LoopbackNamespace("soc-port0-\(getpid() % 100_000)")
        defer { space.remove() }
        let namespace = space.name
        func ip(_ arguments: [String]) throws { try LoopbackNamespace.ip(arguments) }
        let held = 40_000
        func ephemeralPorts(_ low: Int, _ high: Int) throws {
            try ip(["netns", "exec", namespace, "/usr/sbin/sysctl", "-qw", "net.ipv4.ip_local_port_range=\(low) \(high)"])
        }
        let holderScript = try scratch.file("reuseport-holder.py", "PORT = \(held)\n" + """
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(("127.0.0.1", PORT))
            print("HOLDING", flush=True)
            while True:
                s.recv(4096)
                print("GOT", flush=True)
            """)
        let holder = try Child("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/python3", holderScript], scratch: scratch, label: "holder")
        defer { holder.signal(SIGTERM) }
        _ = try holder.waitForLine { $0 == "HOLDING" }
        func helper(_ label: String) throws -> Child {
            try HelperLaunch(
                executable: Products.scrolloffDNS, upstreams: ["127.0.0.1:9"], stateDirectory: "\(scratch.path)/state-\(label)",
                controlSocket: "\(scratch.path)/\(label).sock", webListen: "off", wrappers: [.namespace(namespace)]
            ).spawn(scratch: scratch, label: label)
        }

        // The held port is the only one: no port for the helper, and it says so and exits.
        try ephemeralPorts(held, held)
        let refused = try helper("only-held")
        let deadline = Date().addingTimeInterval(30)
        while refused.isRunning, Date() < deadline { usleep(50_000) }
        #expect(!refused.isRunning, "the helper started on the held port: \(refused.stderr)")
        #expect(refused.stderr.contains("cannot listen on udp 127.0.0.1:0"), "\(refused.stderr)")
        if refused.isRunning { refused.signal(SIGKILL) }

        // More ports (the helper's 16 upstream sockets per loop take theirs from the same range):
        // it serves on another one, and nothing reaches the holder.
        try ephemeralPorts(held, held + 99)
        let serving = try helper("other-port")
        defer { serving.signal(SIGTERM) }
        let line = try serving.waitForLine { $0.hasPrefix("listening udp 127.0.0.1:") }
        let port = try #require(Int(line.split(separator: ":").last ?? ""), "\(line)")
        #expect(port != held && (held...held + 99).contains(port), "\(line)")
        func ask() throws -> String {
            // From a port outside the range, which the holder and the helper's sockets share; a
            // name the helper answers itself (NXDOMAIN: Firefox's DoH canary), so no upstream waits.
            try run("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/dig", "@127.0.0.1", "-p", "\(port)", "-b", "127.0.0.1#50000",
                                     "+time=2", "+tries=1", "use-application-dns.net"])
        }
        var answer = ""
        for _ in 0..<20 where !answer.contains("->>HEADER<<-") {
            answer = (try? ask()) ?? ""
            if !answer.contains("->>HEADER<<-") { usleep(200_000) }
        }
        #expect(answer.contains("->>HEADER<<-"), "no answer on \(port): \(serving.stderr)")
        for _ in 0..<8 { _ = try? ask() }
        #expect(!holder.stdout.contains("GOT"), "the holder received the helper's queries")
    }
}
