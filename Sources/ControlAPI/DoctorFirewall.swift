import Foundation

/// What `doctor` learns about the firewall table (SPEC §9b) from the helper: nil while it is off.
public struct DoctorFirewallFacts: Codable, Sendable, Equatable {
    /// `workstation` or `router`.
    public var mode: String
    /// Whether `nft` finds the table `inet scrolloff` now.
    public var tableInPlace: Bool
    /// Addresses of DoH resolvers HTTPS is refused to.
    public var dohAddresses: Int
    /// Packets each counter counted since the helper started: `dns_redirected`, `dns_refused`,
    /// `dot_refused`, `doh_refused`, `resolver_refused` (other ports of a listed resolver).
    public var attempts: [String: UInt64]
    /// The devices that tried most, most first (at most three); empty when none did.
    public var topClients: [DoctorFirewallClient] = []

    public init(mode: String, tableInPlace: Bool, dohAddresses: Int, attempts: [String: UInt64]) {
        self.mode = mode
        self.tableInPlace = tableInPlace
        self.dohAddresses = dohAddresses
        self.attempts = attempts
    }
}

/// A device's address and how many bypass attempts the firewall caught from it.
public struct DoctorFirewallClient: Codable, Sendable, Equatable {
    public var address: String
    public var attempts: UInt64

    public init(address: String, attempts: UInt64) {
        self.address = address
        self.attempts = attempts
    }
}

extension DoctorFirewallFacts {
    enum CodingKeys: String, CodingKey { case mode, tableInPlace, dohAddresses, attempts, topClients }

    /// `topClients` is optional on the wire: a helper from before it was added still answers.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(mode: try c.decode(String.self, forKey: .mode), tableInPlace: try c.decode(Bool.self, forKey: .tableInPlace),
                  dohAddresses: try c.decode(Int.self, forKey: .dohAddresses), attempts: try c.decode([String: UInt64].self, forKey: .attempts))
        topClients = try c.decodeIfPresent([DoctorFirewallClient].self, forKey: .topClients) ?? []
    }
}

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
