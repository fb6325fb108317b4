import Foundation
import Testing

/// A listen port already taken: the helper exits non-zero and names who holds it (issue 6).
struct PortConflictEndToEndTests {
    func start(on port: Int, upstream: Int, scratch: Scratch) throws -> Child {
        try Child(
            Products.scrolloffDNS,
            ["start", "--listen", "127.0.0.1:\(port)", "--upstream", "127.0.0.1:\(upstream)",
             "--state-dir", "\(scratch.path)/state-\(UUID().uuidString)", "--control-socket", "\(scratch.path)/c-\(UUID().uuidString.prefix(8)).sock"],
            scratch: scratch, label: "conflict-\(UUID().uuidString)")
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
}
