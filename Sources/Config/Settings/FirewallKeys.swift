import Firewall

/// `[firewall]`: the nftables table against DNS bypasses (SPEC §9b). Applied as one part.
public enum FirewallKeys {
    static let table = ReloadPart.applies(\.firewall, named: .section(.firewall))
    public static let enabled = Setting(
        .firewall, "enabled", .bool, default: .value("false"),
        allowed: "true or false",
        doc: "Close the network bypasses with the kernel's firewall (needs nftables and CAP_NET_ADMIN).",
        reload: table)
    public static let mode = Setting(
        .firewall, "mode", .choice(FirewallSettings.Mode.allCases.map(\.rawValue)), default: .value("\"workstation\""),
        allowed: FirewallSettings.Mode.allCases.map(\.rawValue).joined(separator: " or "),
        doc: "workstation: this machine's own programs; router: also the devices it forwards from lan_interfaces.",
        reload: table)
    public static let lanInterfaces = Setting(
        .firewall, "lan_interfaces", .texts, default: .value("[]"),
        allowed: "interface names such as [\"br-lan\"] (at most 15 characters: letters, digits, - _ . @)",
        doc: "Router mode: the interfaces the household's devices are on.",
        reload: table)
    public static let dohAddresses = Setting(
        .firewall, "doh_addresses", .texts, default: .value("[]"),
        allowed: "numeric addresses or networks such as \"192.0.2.10\" or \"2001:db8::/64\"",
        doc: "Resolvers to refuse on every port, besides the shipped list and the resolved DoH names.",
        reload: table)
    public static let resolveDoHNames = Setting(
        .firewall, "resolve_doh_names", .bool, default: .value("true"),
        allowed: "true or false",
        doc: "Resolve the DoH endpoint names through the upstreams and refuse every port of their addresses too.",
        reload: table)
    public static let mark = Setting(
        .firewall, "mark", .integer(1...0x7FFF_FFFF), default: .value("23567"),
        allowed: "1 to 2147483647",
        doc: "The firewall mark of the helper's own upstream queries, which the redirect lets through.",
        reload: table)

    public static let all = [enabled, mode, lanInterfaces, dohAddresses, resolveDoHNames, mark]
}
