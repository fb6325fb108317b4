import ControlAPI
import Foundation

extension DoctorVerdicts {
    /// The firewall: its table in place, with what it caught, numbers first.
    public static func firewall(_ facts: DoctorFirewallFacts) -> DoctorCheck {
        guard facts.tableInPlace else {
            return .fail("firewall", "[firewall] is on (\(facts.mode)) but the table inet scrolloff is not in the kernel, so other resolvers, "
                + "DNS over TLS and the listed resolvers' addresses (DoH, DNSCrypt, DNS on other ports) are open",
                fix: "Look at the helper's log (journalctl -u scrolloff-dns) for what nft said, then `systemctl reload scrolloff-dns`; "
                    + "`nft list table inet scrolloff` shows the table once it is back.")
        }
        let count = { (name: String) in facts.attempts[name] ?? 0 }
        // DNS of a family the sinkhole does not listen on is refused, not redirected: said only when it
        // happened, since it points at a listener to add (README, Closing the bypasses).
        let refused = count("dns_refused") == 0 ? "" : ", \(count("dns_refused")) refused (no listener of their address family)"
        // Other ports of a listed resolver (DNSCrypt, DNS over QUIC, DNS on 5353): said when it happened.
        let otherPorts = count("resolver_refused") == 0 ? "" : ", \(count("resolver_refused")) more to other ports of those resolvers"
        return .pass("firewall", "table inet scrolloff in place (\(facts.mode)); \(count("dns_redirected")) DNS questions to other resolvers "
            + "answered by Scroll Off\(refused), \(count("dot_refused")) DNS-over-TLS and \(count("doh_refused")) DNS-over-HTTPS connections "
            + "refused\(otherPorts) (\(facts.dohAddresses) resolver addresses) since the helper started"
            + (facts.topClients.isEmpty ? "" : "; most from " + facts.topClients.map { "\($0.address) (\($0.attempts))" }.joined(separator: ", ")))
    }
}
