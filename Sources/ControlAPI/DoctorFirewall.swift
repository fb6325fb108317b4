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
