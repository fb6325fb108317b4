#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// A machine with IPv6 but no IPv4 address beyond loopback (an IPv6-only host or container) still
/// forwards to an IPv4 upstream such as a local resolver on 127.0.0.1 (SPEC §9.5). Before, the
/// helper's IPv4 upstream sockets were bound by the host name "0.0.0.0", which getaddrinfo's
/// default hints turn into the IPv6 `::ffff:0.0.0.0` on such a machine, and no answer came back.
struct IPv6OnlyHostEndToEndTests {
    @Test(arguments: PrivilegeMode.allCases)
    func an_ipv4_upstream_on_loopback_answers_on_a_host_whose_only_other_address_is_ipv6(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        // One namespace per case: the cases run side by side.
        let space = try LoopbackNamespace("soc-v6only-\(getpid() % 100_000)-\(PrivilegeMode.allCases.firstIndex(of: mode) ?? 0)")
        defer { space.remove() }
        let namespace = space.name
        // A global IPv6 address and no IPv4 beyond 127.0.0.1: what makes AI_ADDRCONFIG map.
        try LoopbackNamespace.ip(["-n", namespace, "addr", "add", "2001:db8:5c::1/64", "dev", "lo", "nodad"])
        let upstreamPort = 5300
        let log = "\(scratch.path)/dnsmasq-v6only.log"
        let upstream = try Child("/usr/sbin/ip", space.inside([
            "/usr/sbin/dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=\(upstreamPort)",
            "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv", "--no-hosts", "--log-queries", "--log-facility=\(log)",
            "--pid-file=", "--host-record=host.test,10.0.0.7",
        ]), scratch: scratch, label: "dnsmasq-v6only")
        defer { upstream.signal(SIGTERM) }
        func digInside(_ port: Int, _ name: String) throws -> String {
            try run("/usr/sbin/ip", space.inside(["/usr/bin/dig", "@127.0.0.1", "-p", "\(port)", "+time=2", "+tries=1", "+short", name]))
        }
        var upstreamReady = false
        for _ in 0..<100 where !upstreamReady {
            upstreamReady = (try? digInside(upstreamPort, "host.test"))?.contains("10.0.0.7") == true
            if !upstreamReady { Thread.sleep(forTimeInterval: 0.05) }
        }
        try #require(upstreamReady, "dnsmasq in \(namespace) does not answer: \(upstream.stderr)")

        let helper = try Sinkhole(scratch: scratch, upstreams: [upstreamPort], extra: ["--web-listen", "off"], mode: mode,
                                  wrapper: [.namespace(space.name)])
        defer { helper.child.signal(SIGTERM) }
        #expect(try digInside(helper.port, "host.test") == "10.0.0.7\n", "helper log: \(helper.child.stderr)")
    }
}
