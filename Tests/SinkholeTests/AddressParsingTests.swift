import NIOCore
import Testing
@testable import Sinkhole

/// `--listen` and `--upstream` addresses (SPEC §13), an upstream's health, a client's address.
/// (Which upstreams /etc/resolv.conf gives is Config's: `ResolvConfTests` in ConfigurationTests.)
@Suite struct AddressParsingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var defaultPort: Int?
        var expected: HostPort?
        var testDescription: String { text }
    }

    @Test(arguments: [
        Case(text: "127.0.0.1:5300", defaultPort: nil, expected: HostPort(host: "127.0.0.1", port: 5300)),
        Case(text: "[::1]:53", defaultPort: nil, expected: HostPort(host: "::1", port: 53)),
        Case(text: "127.0.0.1:0", defaultPort: nil, expected: HostPort(host: "127.0.0.1", port: 0)),
        Case(text: "9.9.9.9", defaultPort: 53, expected: HostPort(host: "9.9.9.9", port: 53)),
        Case(text: "2620:fe::fe", defaultPort: 53, expected: HostPort(host: "2620:fe::fe", port: 53)),
        Case(text: "[2620:fe::fe]", defaultPort: 53, expected: HostPort(host: "2620:fe::fe", port: 53)),
        Case(text: "9.9.9.9:5353", defaultPort: 53, expected: HostPort(host: "9.9.9.9", port: 5353)),
        Case(text: "127.0.0.1", defaultPort: nil, expected: nil),
        Case(text: "127.0.0.1:70000", defaultPort: nil, expected: nil),
        Case(text: "dns.google:53", defaultPort: nil, expected: nil),
        Case(text: "[::1:53", defaultPort: nil, expected: nil),
    ])
    func host_port(c: Case) {
        let parsed = try? HostPort(parsing: c.text, defaultPort: c.defaultPort)
        #expect(parsed == c.expected)
    }

    @Test func host_port_prints_ipv6_in_brackets() {
        #expect(HostPort(host: "::1", port: 53).description == "[::1]:53")
        #expect(HostPort(host: "127.0.0.1", port: 53).description == "127.0.0.1:53")
    }

    @Test func client_address_reads_ipv4_and_ipv6() throws {
        #expect(ClientAddress(try SocketAddress(ipAddress: "192.168.1.20", port: 1)) == .v4(0xC0A8_0114))
        #expect(ClientAddress(try SocketAddress(ipAddress: "2001:db8::1", port: 1)) == .v6(high: 0x2001_0DB8_0000_0000, low: 1))
        #expect(ClientAddress(nil) == .unknown)
    }
}
