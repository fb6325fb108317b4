import ControlAPI
@testable import DoctorChecks
import Testing

/// systemd-resolved's routing of an ordinary name, from `resolvectl dns`, `domain` and
/// `default-route`, and glibc's `hosts:` line in nsswitch.conf.
struct ResolvedRoutingTests {
    static let sinkhole = NameServer(host: "127.0.0.1")
    static let router = NameServer(host: "192.168.1.1")
    static let vpn = NameServer(host: "10.8.0.1")

    @Test func resolvectl_outputs_make_one_scope_per_line_of_dns() {
        let scopes = ResolverSetup.resolvedScopes(
            dns: "Global: 127.0.0.1\nLink 2 (eth0): 192.168.1.1 fe80::1%2\nLink 3 (wlan0):\n",
            domains: "Global: ~.\nLink 2 (eth0): lan\nLink 3 (wlan0):\n",
            defaultRoute: "Link 2 (eth0): yes\nLink 3 (wlan0): no\n")
        #expect(scopes == [
            ResolvedScope(name: "Global", servers: [Self.sinkhole], domains: ["~."]),
            ResolvedScope(name: "Link 2 (eth0)", servers: [Self.router, NameServer(host: "fe80::1")], domains: ["lan"], defaultRoute: true),
            ResolvedScope(name: "Link 3 (wlan0)", servers: [], domains: [], defaultRoute: false),
        ])
    }

    struct RoutingCase: Sendable, CustomTestStringConvertible {
        var label: String
        var scopes: [ResolvedScope]
        var domainsKnown = true
        var asked: [NameServer]
        var ignored: [NameServer] = []
        var links: [NameServer: String] = [:]
        var testDescription: String { label }
    }

    static let cases: [RoutingCase] = [
        RoutingCase(label: "README's fix: global ~. at the sinkhole, DHCP server on a default-route link",
                    scopes: [ResolvedScope(name: "Global", servers: [sinkhole], domains: ["~."]),
                             ResolvedScope(name: "Link 2 (eth0)", servers: [router], domains: ["lan"], defaultRoute: true)],
                    asked: [sinkhole], ignored: [router]),
        RoutingCase(label: "a link with its own ~. ties with the global one and is asked too",
                    scopes: [ResolvedScope(name: "Global", servers: [sinkhole], domains: ["~."]),
                             ResolvedScope(name: "Link 5 (tun0)", servers: [vpn], domains: ["~."])],
                    asked: [sinkhole, vpn], links: [vpn: "Link 5 (tun0)"]),
        RoutingCase(label: "~. on a link only: that link takes every name",
                    scopes: [ResolvedScope(name: "Global", servers: []),
                             ResolvedScope(name: "Link 2 (eth0)", servers: [router], defaultRoute: true),
                             ResolvedScope(name: "Link 4 (lo)", servers: [sinkhole], domains: ["~."])],
                    asked: [sinkhole], ignored: [router], links: [sinkhole: "Link 4 (lo)"]),
        RoutingCase(label: "a ~. scope without servers routes nothing",
                    scopes: [ResolvedScope(name: "Global", servers: [], domains: ["~."]),
                             ResolvedScope(name: "Link 2 (eth0)", servers: [router], defaultRoute: true)],
                    asked: [router], links: [router: "Link 2 (eth0)"]),
        RoutingCase(label: "no ~.: global and default-route links",
                    scopes: [ResolvedScope(name: "Global", servers: [sinkhole]),
                             ResolvedScope(name: "Link 2 (eth0)", servers: [router], domains: ["lan"], defaultRoute: true),
                             ResolvedScope(name: "Link 5 (tun0)", servers: [vpn], domains: ["~corp.example"], defaultRoute: false)],
                    asked: [sinkhole, router], ignored: [vpn], links: [router: "Link 2 (eth0)"]),
        RoutingCase(label: "no ~. and no default-route setting: a link with a routing-only domain is not a default route",
                    scopes: [ResolvedScope(name: "Global", servers: [sinkhole]),
                             ResolvedScope(name: "Link 2 (eth0)", servers: [router]),
                             ResolvedScope(name: "Link 5 (tun0)", servers: [vpn], domains: ["~corp.example"])],
                    asked: [sinkhole, router], ignored: [vpn], links: [router: "Link 2 (eth0)"]),
        RoutingCase(label: "domains unknown: every server counts",
                    scopes: [ResolvedScope(name: "Global", servers: [sinkhole]),
                             ResolvedScope(name: "Link 2 (eth0)", servers: [router, sinkhole], defaultRoute: false)],
                    domainsKnown: false, asked: [sinkhole, router]),
    ]

    @Test(arguments: cases)
    func an_ordinary_name_goes_to_the_tilde_dot_scopes_or_else_to_the_default_routes(_ c: RoutingCase) {
        #expect(ResolverSetup.ordinaryNameRouting(c.scopes, domainsKnown: c.domainsKnown) == ResolvedRouting(asked: c.asked, ignored: c.ignored, links: c.links))
    }

    @Test(arguments: [
        ("hosts: files dns\n", false, true),
        ("hosts:          files mymachines resolve [!UNAVAIL=return] dns myhostname\n", true, false),
        ("hosts: files resolve [ !UNAVAIL=return ] dns\n", true, false),
        ("hosts: files mdns4_minimal [NOTFOUND=return] resolve dns\n", true, true),
        ("hosts: files resolve [NOTFOUND=return] dns\n", true, false),
        ("hosts: files resolve myhostname\n", true, false),
        ("hosts: files dns resolve\n", false, true),
        ("# hosts: resolve\npasswd: files\nhosts:files resolve [!UNAVAIL=return] dns\n", true, false),
        ("hostsx: resolve\n", false, true),
        ("", false, true),
    ] as [(String, Bool, Bool)])
    func nsswitch_hosts_line_says_whether_glibc_asks_resolved_directly(text: String, asksResolved: Bool, thenResolvConf: Bool) {
        #expect(ResolverSetup.hostsLookup(nsswitch: text) == ResolverSetup.HostsLookup(asksResolved: asksResolved, thenResolvConf: thenResolvConf))
    }
}
