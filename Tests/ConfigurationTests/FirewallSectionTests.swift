@testable import Helper
@testable import ServiceKit
import Testing

/// `[firewall]` (SPEC §9b): each key reaches the settings, bad values name their line,
/// and `block_encrypted_dns` follows the firewall unless set.
@Suite("[firewall]: the anti-bypass table's settings")
struct FirewallSectionTests {
    @Test func every_key_reaches_the_settings() throws {
        let c = try parse("""
            [dns]
            upstreams = ["9.9.9.9"]
            listen = ["0.0.0.0:53"]
            [firewall]
            enabled = true
            mode = "router"
            lan_interfaces = ["br-lan", "wlan0"]
            doh_addresses = ["192.0.2.10", "2001:db8::/64"]
            resolve_doh_names = false
            mark = 4660
            """)
        #expect(c.firewall.enabled && c.firewall.mode == .router)
        #expect(c.firewall.lanInterfaces == ["br-lan", "wlan0"])
        #expect(c.firewall.extraDoHAddresses == ["192.0.2.10", "2001:db8::/64"])
        #expect(!c.firewall.resolveDoHNames && c.firewall.mark == 4660)
    }

    @Test func block_encrypted_dns_is_on_by_default_when_the_firewall_is_on() throws {
        let on = try parse("[dns]\nupstreams = [\"9.9.9.9\"]\n[firewall]\nenabled = true\n")
        #expect(on.dohEndpointsPath?.hasSuffix("/doh/encrypted-dns.list") == true)
        let off = try parse("[dns]\nupstreams = [\"9.9.9.9\"]\n")
        #expect(off.dohEndpointsPath == nil)
        let pinned = try parse("[dns]\nupstreams = [\"9.9.9.9\"]\nblock_encrypted_dns = false\n[firewall]\nenabled = true\n")
        #expect(pinned.dohEndpointsPath == nil)
    }

    @Test(arguments: [
        ("[firewall]\nmode = \"gateway\"\n", "firewall.mode", 2, "workstation or router"),
        ("[firewall]\nlan_interfaces = [\"eth0\", \"a very long interface name\"]\n", "firewall.lan_interfaces[2]", 2, "interface names"),
        ("[firewall]\ndoh_addresses = [\"dns.google\"]\n", "firewall.doh_addresses[1]", 2, "numeric addresses"),
        ("[firewall]\ndoh_addresses = [\"10.0.0.0/33\"]\n", "firewall.doh_addresses[1]", 2, "numeric addresses"),
        ("[firewall]\nmark = 0\n", "firewall.mark", 2, "1 to 2147483647"),
        ("[firewall]\nenabled = true\nmode = \"router\"\n", "firewall.lan_interfaces", 0, "the interfaces"),
        ("[firewall]\nenable = true\n", "firewall.enable", 2, "enabled"),
    ])
    func a_bad_value_is_refused_with_its_key_and_line(_ text: String, _ key: String, _ line: Int, _ allowed: String) {
        let found = problems(text)
        #expect(found.contains { $0.key == key && (line == 0 || $0.line == line) && ($0.allowed ?? "").contains(allowed) }, "\(found)")
    }

    @Test func the_firewall_needs_the_dns_sinkhole() throws {
        let c = try parse("[helper]\nmode = \"hosts\"\n[dns]\nupstreams = [\"9.9.9.9\"]\n[firewall]\nenabled = true\n")
        #expect(throws: ConfigurationRejected.self) { try ConfigurationReloader.validate(c) }
    }
}
