import Enforcement
import Testing

@Suite("Client → profile routing")
struct ClientRouterTests {
    /// Profile 1 claims 10.0.0.0/8 and fd00::/8, profile 2 claims 10.5.0.0/16 and one host of each
    /// family, profile 3 the whole IPv4 space (/0): longer prefixes win whatever the profile order.
    static let router: ClientRouter = {
        func nets(_ texts: [String]) -> [ClientNetwork] { texts.compactMap { try? ClientNetwork(parsing: $0) } }
        return ClientRouter(networks: [
            [],
            nets(["10.0.0.0/8", "fd00::/8"]),
            nets(["10.5.0.0/16", "192.168.1.77", "fd00::77"]),
            nets(["0.0.0.0/0"]),
        ])
    }()

    @Test(arguments: [
        ("10.1.2.3", 1),
        ("10.5.0.1", 2),
        ("10.5.255.255", 2),
        ("10.6.0.1", 1),
        ("192.168.1.77", 2),
        ("192.168.1.78", 3),
        ("8.8.8.8", 3),
        ("fd00::1", 1),
        ("fd00::77", 2),
        ("fe80::1", 0),
        ("2001:db8::", 0),
        ("::ffff:10.5.1.1", 2),
    ])
    func longest_prefix_wins(client: String, profile: Int) {
        let ip = ClientIP(client)
        #expect(ip != nil, "\(client) parses")
        #expect(Self.router.profile(for: ip ?? .unknown) == profile)
    }

    @Test func an_unplaceable_client_gets_the_default_profile() {
        #expect(Self.router.profile(for: .unknown) == 0)
    }

    @Test(arguments: ["10.0.0", "1.2.3.256", "fd00:::1", "1:2:3:4:5:6:7:8:9", "example.com", "",
                      "+1.2.3.4", "1.2.3.04x", "1.+2.3.4", "::ffff:+1.2.3.4", "fd00::+1", "::ffff:1.2.3"])
    func malformed_addresses_are_rejected(text: String) {
        #expect(ClientIP(text) == nil)
    }

    @Test(arguments: ["+1.2.3.4/32", "1.2.3.04x", "10.0.0.0/+8", "10.0.0.0/", "fd00::/+8", "1.2.3.4/32/1"])
    func malformed_client_networks_are_rejected(text: String) {
        #expect(throws: ClientNetworkError.self) { try ClientNetwork(parsing: text) }
    }

    @Test func an_ipv4_tail_in_an_ipv6_address_is_read_as_its_two_groups() {
        #expect(ClientIP("::ffff:10.5.1.1") == .v6(high: 0, low: 0xFFFF_0A05_0101))
        #expect(ClientIP("64:ff9b::192.0.2.1") == .v6(high: 0x0064_FF9B_0000_0000, low: 0xC000_0201))
    }
}
