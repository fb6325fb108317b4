import ControlAPI
@testable import DoctorChecks
import Testing

/// Reading /etc/resolv.conf, systemd-resolved's servers, and telling whether a server is the sinkhole.
struct ResolverSetupTests {
    @Test(arguments: [
        ("nameserver 127.0.0.1\n", ["127.0.0.1"]),
        ("# from DHCP\nsearch lan\nnameserver\t192.168.1.1\noptions edns0 trust-ad\n", ["192.168.1.1"]),
        ("nameserver 10.0.0.1  # trailing words are ignored\n", ["10.0.0.1"]),
        // glibc reads the keyword only at the start of a line.
        ("  nameserver 10.0.0.2\n", []),
        ("nameserver 1.1.1.1\nnameserver 8.8.8.8\nnameserver 9.9.9.9\nnameserver 127.0.0.1\n", ["1.1.1.1", "8.8.8.8", "9.9.9.9"]),
        ("nameserver fe80::1%eth0\n", ["fe80::1"]),
        ("nameserver 0:0:0:0:0:0:0:1\n", ["::1"]),
        ("nameserver dns.example.org\nnameserver\nnameserverx 1.2.3.4\n", []),
        ("", []),
    ])
    func resolv_conf_gives_glibcs_first_three_nameservers_on_port_53(text: String, hosts: [String]) {
        let servers = ResolverSetup.nameServers(resolvConf: text)
        #expect(servers.map(\.host) == hosts)
        #expect(servers.allSatisfy { $0.port == 53 })
    }

    @Test func resolveds_own_list_is_read_whole() {
        let text = "nameserver 1.1.1.1\nnameserver 8.8.8.8\nnameserver 9.9.9.9\nnameserver 127.0.0.1\n"
        #expect(ResolverSetup.nameServers(resolvConf: text, limit: nil).map(\.host) == ["1.1.1.1", "8.8.8.8", "9.9.9.9", "127.0.0.1"])
    }

    @Test func resolvectl_output_keeps_ports_and_drops_interface_and_server_names() {
        let output = """
            Global: 127.0.0.1 9.9.9.9#dns.quad9.net
            Link 2 (eth0): 192.168.1.1 fe80::1%2 [::1]:5300 127.0.0.1:5300
            Link 3 (wlan0):
            Link 4 (tun0): 192.168.1.1
            """
        #expect(ResolverSetup.nameServers(resolvectlOutput: output) == [
            NameServer(host: "127.0.0.1"), NameServer(host: "9.9.9.9"), NameServer(host: "192.168.1.1"),
            NameServer(host: "fe80::1"), NameServer(host: "::1", port: 5300), NameServer(host: "127.0.0.1", port: 5300),
        ])
    }

    static let loopback53 = [DoctorListener(transport: "udp", host: "127.0.0.1", port: 53), DoctorListener(transport: "tcp", host: "127.0.0.1", port: 53)]

    @Test(arguments: [
        (NameServer(host: "127.0.0.1"), loopback53, Set<String>(), ServerMatch.sinkhole),
        (NameServer(host: "127.0.0.2"), loopback53, [], .elsewhere),
        (NameServer(host: "127.0.0.1"), [DoctorListener(transport: "udp", host: "127.0.0.1", port: 5300)], [], .otherPort(listenerPort: 5300)),
        (NameServer(host: "127.0.0.1", port: 5300), [DoctorListener(transport: "udp", host: "127.0.0.1", port: 5300)], [], .sinkhole),
        // Only UDP listeners count: resolvers ask over UDP first.
        (NameServer(host: "127.0.0.1"), [DoctorListener(transport: "tcp", host: "127.0.0.1", port: 53)], [], .elsewhere),
        (NameServer(host: "127.0.0.1"), [DoctorListener(transport: "udp", host: "0.0.0.0", port: 53)], [], .sinkhole),
        (NameServer(host: "192.168.1.5"), [DoctorListener(transport: "udp", host: "0.0.0.0", port: 53)], ["192.168.1.5"], .sinkhole),
        (NameServer(host: "192.168.1.1"), [DoctorListener(transport: "udp", host: "0.0.0.0", port: 53)], ["192.168.1.5"], .elsewhere),
        (NameServer(host: "::1"), [DoctorListener(transport: "udp", host: "0.0.0.0", port: 53)], [], .elsewhere),
        (NameServer(host: "::1"), [DoctorListener(transport: "udp", host: "::", port: 53)], [], .sinkhole),
        (NameServer(host: "::1"), [DoctorListener(transport: "udp", host: "0:0::1", port: 53)], [], .sinkhole),
    ] as [(NameServer, [DoctorListener], Set<String>, ServerMatch)])
    func a_server_is_the_sinkhole_when_a_udp_listener_answers_on_its_address_and_port(
        server: NameServer, listeners: [DoctorListener], local: Set<String>, expected: ServerMatch
    ) {
        #expect(ResolverSetup.match(server, listeners: listeners, localAddresses: local) == expected)
    }

    @Test(arguments: [
        ([DoctorListener(transport: "udp", host: "192.168.1.5", port: 53), DoctorListener(transport: "udp", host: "127.0.0.1", port: 53)], "127.0.0.1"),
        ([DoctorListener(transport: "udp", host: "0.0.0.0", port: 53)], "127.0.0.1"),
        ([DoctorListener(transport: "udp", host: "::", port: 53)], "::1"),
        ([DoctorListener(transport: "udp", host: "192.168.1.5", port: 53)], "192.168.1.5"),
        ([DoctorListener(transport: "udp", host: "127.0.0.1", port: 5300)], nil),
    ] as [([DoctorListener], String?)])
    func the_address_suggested_for_resolv_conf_is_a_port_53_listener_loopback_first(listeners: [DoctorListener], expected: String?) {
        #expect(ResolverSetup.suggestedAddress(listeners: listeners) == expected)
    }

    @Test(arguments: [
        ([DoctorListener(transport: "tcp", host: "127.0.0.1", port: 53)], nil),
        ([DoctorListener(transport: "udp", host: "192.168.1.5", port: 53), DoctorListener(transport: "udp", host: "127.0.0.1", port: 5300)], "127.0.0.1:5300"),
        ([DoctorListener(transport: "udp", host: "0.0.0.0", port: 53)], "127.0.0.1:53"),
        ([DoctorListener(transport: "udp", host: "::", port: 53)], "::1:53"),
        ([DoctorListener(transport: "udp", host: "192.168.1.5", port: 53)], "192.168.1.5:53"),
    ] as [([DoctorListener], String?)])
    func probes_go_to_a_udp_listener_loopback_first(listeners: [DoctorListener], expected: String?) {
        let target = DoctorProbeFacts.target(among: listeners)
        #expect(target.map { "\($0.host):\($0.port)" } == expected)
    }
}
