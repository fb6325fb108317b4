import Foundation

/// The nftables table `inet scrolloff` as text for `nft -f` (SPEC §9b): a pure function
/// of the settings, the sinkhole's bound addresses and the DoH address set, so what the kernel is
/// given is checked by unit tests on its text, and the end-to-end tests check the kernel obeys it.
///
/// One transaction (`nft -f` applies a file atomically, nft(8) "-f"): declare the table (a no-op
/// when it exists), delete it, and define it again. Only our table is named, so nothing another
/// tool put in the ruleset is touched, and there is never a moment with half a table.
///
/// What the table does:
/// - DNS (UDP and TCP port 53) to any address is sent to the sinkhole: `redirect` from the output
///   hook for this machine's processes, and in router mode from the prerouting hook for what
///   arrives on the LAN interfaces. The helper's own upstream sockets carry `mark` (SO_MARK) and are
///   let through, so forwarding does not loop back to itself. Packets to the sinkhole itself are
///   redirected to it again, which changes nothing.
/// - A family the sinkhole does not listen on (no IPv6 listener) has its DNS refused instead:
///   closed, not open.
/// - DNS over TLS (port 853, TCP and UDP for DoQ, RFC 7858 and RFC 9250) is refused with a TCP reset
///   or ICMP port unreachable, so a client falls back at once instead of waiting for a timeout.
/// - Every TCP and UDP port of an address in the resolver sets (the DoH sets) is refused the same
///   way: such an address is a DNS service's, and it serves DNS on more than 53, 853 and 443
///   (DNSCrypt on 443, 5353 and others, DNS over QUIC on 784 and 8853, plain DNS on 5353), so
///   naming ports would leave the next one open. HTTPS (TCP 443, and UDP 443 for HTTP/3)
///   keeps a counter of its own. Port 53 never gets here: it was redirected to the sinkhole in the
///   nat hook before. Each IPv4 element is also in the IPv6 set as its NAT64 form (RFC 6052's
///   well-known prefix 64:ff9b::/96), which reaches the same resolver on an IPv6-only LAN.
///   The helper's own (marked) sockets are exempt, as its upstreams may be such an address.
///   ICMP (ping) stays open: it carries no DNS.
/// - Named counters count each (`nft list counters`), read for metrics, events and `doctor`.
struct FirewallRuleset: Equatable {
    /// Where redirected DNS of one family goes.
    enum Target: Equatable {
        /// `redirect to :port`: the machine's own address (127.0.0.1 or ::1 from the output hook,
        /// the incoming interface's first address from prerouting); for a wildcard listener.
        case redirect(port: Int)
        /// `dnat to address:port`: for a listener on one address.
        case dnat(address: String, port: Int)
    }

    static let family = "inet"
    static let table = "scrolloff"
    /// Counter names, also the labels of the metrics.
    enum Counter: String, CaseIterable {
        case dnsRedirected = "dns_redirected"
        case dnsRefused = "dns_refused"
        case dotRefused = "dot_refused"
        case dohRefused = "doh_refused"
        /// Any other TCP or UDP port of a listed resolver's address (DNSCrypt, DNS over QUIC, DNS on 5353).
        case resolverRefused = "resolver_refused"
    }

    var mode: FirewallSettings.Mode
    var lanInterfaces: [String]
    var mark: UInt32
    /// For this machine's processes (output hook).
    var localIPv4: Target?
    var localIPv6: Target?
    /// For the LAN (prerouting hook, router mode).
    var lanIPv4: Target?
    var lanIPv6: Target?
    /// Addresses or networks of DoH resolvers, each family apart (nft sets are typed).
    var dohIPv4: [String]
    var dohIPv6: [String]

    /// Takes the targets from the sockets the DNS server bound (UDP ones; TCP binds the same).
    ///
    /// The reply must leave from the address the question was redirected to, or conntrack cannot
    /// give it the original resolver's address back and the client drops it. A UDP socket on the
    /// wildcard address answers from the address the route to the client picks (the sinkhole
    /// does not use IP_PKTINFO), so:
    /// - for this machine: a loopback listener (`redirect` goes to 127.0.0.1/::1, and the reply
    ///   leaves from there), else one on a single address (`dnat`), else the wildcard, which only
    ///   answers programs whose own source is a loopback address (README: listen on loopback too);
    /// - for the LAN: the wildcard (`redirect` goes to the incoming interface's address, which is
    ///   also the source of the route back to the device), else a single non-loopback address
    ///   (`dnat`); loopback cannot be reached from another host without route_localnet.
    ///
    /// A listener on `::` takes IPv4 too: the sinkhole clears IPV6_V6ONLY on its `::` sockets
    /// (`DatagramListener` for UDP, SwiftNIO for TCP), whatever `net.ipv6.bindv6only` says. So a
    /// helper listening on `[::]:53` alone answers IPv4 as well, and its IPv4 DNS is redirected
    /// there like a `0.0.0.0` listener's, instead of being refused as a family with no listener.
    init(settings: FirewallSettings, listeners: [HostPortText], dohAddresses: [String]) {
        mode = settings.mode
        lanInterfaces = settings.lanInterfaces
        mark = settings.mark
        // A dual-stack `::` socket stands for the IPv4 wildcard after any real IPv4 listener.
        let mapped = listeners.filter { $0.host == "::" }.map { HostPortText(host: "0.0.0.0", port: $0.port) }
        func pick(v6: Bool, lan: Bool) -> Target? {
            let candidates = (listeners + (v6 ? [] : mapped)).filter { $0.isIPv6 == v6 && $0.port != 0 }
            let wildcard = v6 ? "::" : "0.0.0.0"
            let loopback = v6 ? "::1" : "127.0.0.1"
            let single = candidates.first { $0.host != wildcard && !$0.isLoopback }.map { Target.dnat(address: $0.host, port: $0.port) }
            let any = candidates.first { $0.host == wildcard }.map { Target.redirect(port: $0.port) }
            if lan { return any ?? single }
            let local = candidates.first { $0.host == loopback }.map { Target.redirect(port: $0.port) }
            return local ?? single ?? any
        }
        localIPv4 = pick(v6: false, lan: false)
        localIPv6 = pick(v6: true, lan: false)
        lanIPv4 = mode == .router ? pick(v6: false, lan: true) : nil
        lanIPv6 = mode == .router ? pick(v6: true, lan: true) : nil
        var v4: [String] = [], v6: [String] = []
        for address in dohAddresses + settings.extraDoHAddresses {
            switch FirewallValues.addressFamily(address) {
            case 4: if !v4.contains(address) { v4.append(address) }
            case 6: if !v6.contains(address) { v6.append(address) }
            default: continue // never reaches nft: the file reader and the resolver check first
            }
        }
        dohIPv4 = v4
        dohIPv6 = v6
    }

    /// The transaction that changes only the DoH sets from `previous` to this ruleset, or nil when
    /// anything else differs (then the whole table is replaced).
    ///
    /// New DoH addresses come with every list refresh. Replacing the table for them would start its
    /// named counters and attempt sets from zero, and an attempt counted between reading the old
    /// counters and the replacement would be lost; flushing and refilling the two sets in one
    /// `nft -f` transaction leaves counters, attempt sets and rules as they are.
    func setUpdate(from previous: FirewallRuleset) -> String? {
        var same = previous
        same.dohIPv4 = dohIPv4
        same.dohIPv6 = dohIPv6
        guard same == self, previous != self else { return nil }
        var lines: [String] = []
        for (name, elements) in [("doh_ipv4", dohIPv4), ("doh_ipv6", ipv6SetElements)] {
            lines.append("flush set \(Self.family) \(Self.table) \(name)")
            if !elements.isEmpty {
                lines.append("add element \(Self.family) \(Self.table) \(name) { \(elements.joined(separator: ", ")) }")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The transaction that removes the table, and only it; fine when it is not there.
    static var removal: String { "table \(family) \(table)\ndelete table \(family) \(table)\n" }

    /// The whole transaction: replace our table with this one.
    var text: String {
        var lines = ["table \(Self.family) \(Self.table)", "delete table \(Self.family) \(Self.table)", "table \(Self.family) \(Self.table) {"]
        // `interval` lets an element be a network; `auto-merge` folds overlapping ones (a /24 of
        // the shipped list and an address resolved inside it) instead of refusing the file.
        lines.append("\tset doh_ipv4 {")
        lines.append("\t\ttype ipv4_addr; flags interval; auto-merge;")
        if !dohIPv4.isEmpty { lines.append("\t\telements = { \(dohIPv4.joined(separator: ", ")) }") }
        lines.append("\t}")
        lines.append("\tset doh_ipv6 {")
        lines.append("\t\ttype ipv6_addr; flags interval; auto-merge;")
        if !ipv6SetElements.isEmpty { lines.append("\t\telements = { \(ipv6SetElements.joined(separator: ", ")) }") }
        lines.append("\t}")
        for counter in Counter.allCases { lines.append("\tcounter \(counter.rawValue) { }") }
        // Who tried what (client, server, port), for the events: the helper reads these sets every
        // few seconds and deletes the elements that counted nothing since (`NFTables.takeAttempts`).
        // Bounded; when full, an attempt is still redirected or refused by the rule after the one
        // that records it, only not recorded.
        for (name, type) in [("attempts_ipv4", "ipv4_addr"), ("attempts_ipv6", "ipv6_addr")] {
            lines.append("\tset \(name) {")
            lines.append("\t\ttype \(type) . \(type) . inet_service; flags dynamic,timeout; timeout 1h; size \(Self.attemptsSize);")
            lines.append("\t}")
        }

        // This machine's processes. nat output runs before filter output (priority -100 < 0).
        lines.append("\tchain local_dns {")
        lines.append("\t\ttype nat hook output priority -100; policy accept;")
        lines.append("\t\tmeta mark \(Self.hex(mark)) return")
        // Questions to this machine's own addresses (the sinkhole, or another local resolver whose
        // own upstream questions are caught here in turn) are no bypass: not redirected or counted.
        lines.append("\t\tfib daddr type local return")
        lines += redirects(prefix: "", v4: localIPv4, v6: localIPv6)
        lines.append("\t}")
        lines.append("\tchain local_refuse {")
        lines.append("\t\ttype filter hook output priority 0; policy accept;")
        lines += refusals(prefix: "", exemptMark: true, v4: localIPv4, v6: localIPv6)
        lines.append("\t}")

        if mode == .router {
            let lan = "iifname { \(lanInterfaces.map { "\"\($0)\"" }.joined(separator: ", ")) } "
            lines.append("\tchain lan_dns {")
            lines.append("\t\ttype nat hook prerouting priority -100; policy accept;")
            lines.append("\t\tfib daddr type local return")
            lines += redirects(prefix: lan, v4: lanIPv4, v6: lanIPv6)
            lines.append("\t}")
            // Forwarded traffic only: DNS the router answers itself goes through input, untouched.
            lines.append("\tchain lan_refuse {")
            lines.append("\t\ttype filter hook forward priority 0; policy accept;")
            lines += refusals(prefix: lan, exemptMark: false, v4: lanIPv4, v6: lanIPv6)
            lines.append("\t}")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    private func redirects(prefix: String, v4: Target?, v6: Target?) -> [String] {
        var lines: [String] = []
        for (nfproto, target) in [("ipv4", v4), ("ipv6", v6)] {
            guard let target else { continue }
            let action = switch target {
            case .redirect(let port): "redirect to :\(port)"
            case .dnat(let address, let port):
                nfproto == "ipv4" ? "dnat ip to \(address):\(port)" : "dnat ip6 to [\(address)]:\(port)"
            }
            lines.append("\t\t\(prefix)meta nfproto \(nfproto) meta l4proto { tcp, udp } th dport 53 \(Self.record(nfproto))")
            lines.append("\t\t\(prefix)meta nfproto \(nfproto) meta l4proto { tcp, udp } th dport 53 counter name \(Counter.dnsRedirected.rawValue) \(action)")
        }
        return lines
    }

    private func refusals(prefix: String, exemptMark: Bool, v4: Target?, v6: Target?) -> [String] {
        var lines: [String] = []
        let tcpReset = "reject with tcp reset"
        let unreachable = "reject with icmpx type port-unreachable"
        // A family with nowhere to redirect to: its DNS is refused (the helper's own exempt).
        for (nfproto, target) in [("ipv4", v4), ("ipv6", v6)] where target == nil {
            let exempt = exemptMark ? "meta mark != \(Self.hex(mark)) " : ""
            lines.append("\t\t\(prefix)\(exempt)meta nfproto \(nfproto) meta l4proto { tcp, udp } th dport 53 \(Self.record(nfproto))")
            lines.append("\t\t\(prefix)\(exempt)meta nfproto \(nfproto) tcp dport 53 counter name \(Counter.dnsRefused.rawValue) \(tcpReset)")
            lines.append("\t\t\(prefix)\(exempt)meta nfproto \(nfproto) udp dport 53 counter name \(Counter.dnsRefused.rawValue) \(unreachable)")
        }
        for nfproto in ["ipv4", "ipv6"] {
            lines.append("\t\t\(prefix)meta nfproto \(nfproto) meta l4proto { tcp, udp } th dport 853 \(Self.record(nfproto))")
        }
        lines.append("\t\t\(prefix)tcp dport 853 counter name \(Counter.dotRefused.rawValue) \(tcpReset)")
        lines.append("\t\t\(prefix)udp dport 853 counter name \(Counter.dotRefused.rawValue) \(unreachable)")
        // A listed resolver's address, on every TCP and UDP port. On the output hook the helper's own
        // sockets are exempt (its upstream may be on the list, on any port); forwarded traffic is
        // never the helper's. 853 was refused and recorded above, so it is not recorded twice.
        let exempt = exemptMark ? "meta mark != \(Self.hex(mark)) " : ""
        for (match, set, nfproto) in [("ip daddr", "@doh_ipv4", "ipv4"), ("ip6 daddr", "@doh_ipv6", "ipv6")] {
            let to = "\t\t\(prefix)\(exempt)\(match) \(set) "
            lines.append(to + "meta l4proto { tcp, udp } th dport != 853 \(Self.record(nfproto))")
            lines.append(to + "tcp dport 443 counter name \(Counter.dohRefused.rawValue) \(tcpReset)")
            lines.append(to + "udp dport 443 counter name \(Counter.dohRefused.rawValue) \(unreachable)")
            lines.append(to + "meta l4proto tcp counter name \(Counter.resolverRefused.rawValue) \(tcpReset)")
            lines.append(to + "meta l4proto udp counter name \(Counter.resolverRefused.rawValue) \(unreachable)")
        }
        return lines
    }

    /// The IPv6 set's elements: the IPv6 addresses, then each IPv4 one in its NAT64 form.
    var ipv6SetElements: [String] {
        dohIPv6 + dohIPv4.compactMap(Self.nat64).filter { !dohIPv6.contains($0) }
    }

    /// `a.b.c.d[/n]` under RFC 6052's well-known prefix 64:ff9b::/96, in the hexadecimal form nft
    /// parses (it refuses `64:ff9b::8.8.8.8`): 8.8.8.8 is 64:ff9b::808:808, a /24 a /120.
    static func nat64(_ element: String) -> String? {
        let parts = element.split(separator: "/", omittingEmptySubsequences: false)
        var v4 = in_addr()
        guard let host = parts.first, inet_pton(AF_INET, String(host), &v4) == 1 else { return nil }
        var length = 32
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...32).contains(given) else { return nil }
            length = given
        }
        // Host bits cleared, as nft wants a network's element.
        let value = UInt32(bigEndian: v4.s_addr) & (length == 0 ? 0 : UInt32.max << (32 - length))
        let text = "64:ff9b::" + String(value >> 16, radix: 16) + ":" + String(value & 0xFFFF, radix: 16)
        return length == 32 ? text : text + "/\(96 + length)"
    }

    static func hex(_ mark: UInt32) -> String { "0x" + String(mark, radix: 16) }

    /// Most (client, server, port) triples remembered between two reads, per family.
    static let attemptsSize = 4096

    /// Records the attempt in its family's set: a rule of its own, so a full set (where `update`
    /// does not match) never skips the redirect or refusal that follows. Each element carries a
    /// counter, which gives the per-device counts (packets, or flows for DNS: the nat hook sees a
    /// flow's first packet only, like the `dns_redirected` counter).
    static func record(_ nfproto: String) -> String {
        nfproto == "ipv4"
            ? "update @attempts_ipv4 { ip saddr . ip daddr . th dport counter }"
            : "update @attempts_ipv6 { ip6 saddr . ip6 daddr . th dport counter }"
    }
}

/// A bound listener's address as the ruleset needs it.
struct HostPortText: Equatable, Sendable {
    var host: String
    var port: Int
    var isIPv6: Bool { host.contains(":") }
    var isLoopback: Bool { host == "::1" || host.hasPrefix("127.") }
}
