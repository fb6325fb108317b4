import Foundation

/// `[firewall]` (SPEC §9b): whether the helper keeps its own nftables table that closes
/// the DNS bypasses (another resolver, DNS over TLS, DNS over HTTPS to a known resolver's address).
public struct FirewallSettings: Sendable, Equatable {
    /// Where the table applies.
    public enum Mode: String, Sendable, CaseIterable {
        /// DNS from this machine's own processes (the output hook).
        case workstation
        /// As workstation, plus traffic forwarded from `lanInterfaces` (prerouting and forward
        /// hooks): the helper on the household's gateway.
        case router
    }

    /// The firewall mark of the helper's own upstream sockets (SO_MARK). Chosen to be unlikely to
    /// clash with marks other tools set; `firewall.mark` changes it.
    public static let defaultMark: UInt32 = 0x5C0F

    public var enabled = false
    public var mode: Mode = .workstation
    /// Interface names whose forwarded traffic is covered in router mode (`lan0`, `br-lan`).
    public var lanInterfaces: [String] = []
    /// Addresses or networks of DNS-over-HTTPS resolvers besides the shipped list and the resolved
    /// endpoint names, such as a company resolver ("192.0.2.10", "2001:db8::/64").
    public var extraDoHAddresses: [String] = []
    /// Whether the names of the DoH endpoint list are resolved (through the upstreams) for their
    /// addresses, at start and at every list refresh.
    public var resolveDoHNames = true
    public var mark: UInt32 = FirewallSettings.defaultMark

    public init() {}

    /// The mark the forwarder's sockets carry: only while the firewall is on (SO_MARK needs
    /// CAP_NET_ADMIN, which a helper without a firewall may lack).
    package func mark(if enabled: Bool) -> UInt32? { enabled ? mark : nil }
}

/// Checks of one `firewall` value, shared by the file reader and the ruleset (one set of rules).
package enum FirewallValues {
    /// An interface name as the kernel allows it (IFNAMSIZ 16 with the NUL; no `/`, no spaces),
    /// also safe to quote in the nft language.
    package static func isInterfaceName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 15 && name != "." && name != ".."
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "-_.@".unicodeScalars.contains($0)) }
    }

    /// An IPv4 or IPv6 address, optionally with a prefix length: what an nft set element may be.
    /// Returns the family (4 or 6) or nil.
    package static func addressFamily(_ text: String) -> Int? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let host = parts.first else { return nil }
        let family: Int
        if IPAddressText.isIPv4(String(host)) { family = 4 } else if IPAddressText.isIPv6(String(host)) { family = 6 } else { return nil }
        if parts.count == 2 {
            guard let length = Int(parts[1]), length >= 0, length <= (family == 4 ? 32 : 128) else { return nil }
        }
        return family
    }
}

/// Numeric address text, checked with inet_pton (the same parser nft uses).
enum IPAddressText {
    static func isIPv4(_ text: String) -> Bool {
        var buffer = in_addr()
        return inet_pton(AF_INET, text, &buffer) == 1
    }

    static func isIPv6(_ text: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET6, text, &buffer) == 1
    }
}
