import ControlAPI
@testable import DoctorChecks
import Foundation
import Testing

/// `doctor`'s firewall check and the table's counter for the other ports of a listed resolver
/// (DNSCrypt, DNS over QUIC, DNS on 5353; docs/firewall.md).
struct DoctorFirewallVerdictTests {
    @Test func connections_to_other_ports_of_listed_resolvers_are_counted_in_doctor() {
        let facts = DoctorFirewallFacts(mode: "router", tableInPlace: true, dohAddresses: 109,
                                        attempts: ["dns_redirected": 4, "dot_refused": 2, "doh_refused": 1, "resolver_refused": 7])
        #expect(DoctorVerdicts.firewall(facts).detail == "table inet scrolloff in place (router); 4 DNS questions to other resolvers "
            + "answered by Scroll Off, 2 DNS-over-TLS and 1 DNS-over-HTTPS connections refused, 7 more to other ports of those "
            + "resolvers (109 resolver addresses) since the helper started")
    }

    @Test func a_missing_table_says_every_port_of_the_listed_resolvers_is_open() {
        let facts = DoctorFirewallFacts(mode: "workstation", tableInPlace: false, dohAddresses: 109, attempts: [:])
        let check = DoctorVerdicts.firewall(facts)
        #expect(check.status == .fail)
        #expect(check.detail.contains("DNS on other ports"), "\(check.detail)")
    }
}
