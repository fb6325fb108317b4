@testable import Firewall
import Foundation
import Testing

/// The nftables text the helper applies (SPEC §9b), checked as text, and checked by
/// `nft -c` (parse and validate against the kernel, apply nothing) in a network namespace of its own.
@Suite struct FirewallRulesetTests {
    static func settings(_ mode: FirewallSettings.Mode = .workstation, lan: [String] = []) -> FirewallSettings {
        var s = FirewallSettings()
        s.enabled = true
        s.mode = mode
        s.lanInterfaces = lan
        return s
    }

    static let loopback = [HostPortText(host: "127.0.0.1", port: 53), HostPortText(host: "::1", port: 53)]

    @Test func the_transaction_replaces_only_our_table() {
        let text = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: []).text
        let lines = text.split(separator: "\n")
        #expect(lines.prefix(3) == ["table inet scrolloff", "delete table inet scrolloff", "table inet scrolloff {"])
        // No flush ruleset, no other table: what other tools put in the kernel stays.
        #expect(!text.contains("flush"))
        #expect(text.components(separatedBy: "table ").count - 1 == 3)
        #expect(FirewallRuleset.removal == "table inet scrolloff\ndelete table inet scrolloff\n")
    }

    @Test func workstation_redirects_dns_from_local_processes_except_the_helpers_marked_sockets() {
        let text = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: []).text
        #expect(text.contains("type nat hook output priority -100; policy accept;\n\t\tmeta mark 0x5c0f return\n"))
        #expect(text.contains("meta nfproto ipv4 meta l4proto { tcp, udp } th dport 53 counter name dns_redirected redirect to :53"))
        #expect(text.contains("meta nfproto ipv6 meta l4proto { tcp, udp } th dport 53 counter name dns_redirected redirect to :53"))
        #expect(!text.contains("dns_refused reject"), "both families have a listener, so none is refused")
        #expect(!text.contains("hook prerouting") && !text.contains("hook forward"))
    }

    @Test func dns_of_a_family_without_a_listener_is_refused_not_let_through() {
        let text = FirewallRuleset(settings: Self.settings(), listeners: [HostPortText(host: "127.0.0.1", port: 5300)], dohAddresses: []).text
        #expect(text.contains("redirect to :5300"))
        #expect(text.contains("meta mark != 0x5c0f meta nfproto ipv6 udp dport 53 counter name dns_refused reject with icmpx type port-unreachable"))
        #expect(text.contains("meta mark != 0x5c0f meta nfproto ipv6 tcp dport 53 counter name dns_refused reject with tcp reset"))
    }

    /// A wildcard UDP socket answers from the address of the route back, which for a local program
    /// asking 8.8.8.8 is not 127.0.0.1: conntrack could not map the reply back, so loopback wins.
    @Test func local_programs_go_to_the_loopback_listener_and_the_lan_to_the_wildcard_one() {
        let listeners = [HostPortText(host: "0.0.0.0", port: 53), HostPortText(host: "127.0.0.1", port: 5353)]
        let set = FirewallRuleset(settings: Self.settings(.router, lan: ["lan0"]), listeners: listeners, dohAddresses: [])
        #expect(set.localIPv4 == .redirect(port: 5353))
        #expect(set.lanIPv4 == .redirect(port: 53))
    }

    /// `listen = ["[::]:53"]` alone: the socket takes IPv4 too (the sinkhole clears IPV6_V6ONLY), so
    /// IPv4 DNS goes there instead of being refused as a family without a listener.
    @Test func a_dual_stack_wildcard_listener_serves_ipv4_as_well() {
        let listeners = [HostPortText(host: "::", port: 53)]
        let set = FirewallRuleset(settings: Self.settings(.router, lan: ["lan0"]), listeners: listeners, dohAddresses: [])
        #expect(set.lanIPv4 == .redirect(port: 53) && set.lanIPv6 == .redirect(port: 53))
        #expect(set.localIPv4 == .redirect(port: 53) && set.localIPv6 == .redirect(port: 53))
        #expect(!set.text.contains("dns_refused reject"))
        // A real IPv4 listener still wins for local programs (loopback) and the LAN (wildcard).
        let both = FirewallRuleset(settings: Self.settings(.router, lan: ["lan0"]),
                                   listeners: listeners + [HostPortText(host: "127.0.0.1", port: 5300)], dohAddresses: [])
        #expect(both.localIPv4 == .redirect(port: 5300) && both.lanIPv4 == .redirect(port: 53))
    }

    @Test func a_listener_on_one_lan_address_is_reached_by_dnat() {
        let listeners = [HostPortText(host: "192.168.1.1", port: 53)]
        let set = FirewallRuleset(settings: Self.settings(.router, lan: ["br-lan"]), listeners: listeners, dohAddresses: [])
        #expect(set.localIPv4 == .dnat(address: "192.168.1.1", port: 53))
        #expect(set.lanIPv4 == .dnat(address: "192.168.1.1", port: 53))
        #expect(set.text.contains("iifname { \"br-lan\" } meta nfproto ipv4 meta l4proto { tcp, udp } th dport 53 counter name dns_redirected dnat ip to 192.168.1.1:53"))
    }

    @Test func router_covers_forwarded_traffic_from_the_lan_interfaces_only() {
        let listeners = [HostPortText(host: "0.0.0.0", port: 53)]
        let text = FirewallRuleset(settings: Self.settings(.router, lan: ["lan0", "wlan0"]), listeners: listeners, dohAddresses: ["8.8.8.8"]).text
        #expect(text.contains("type nat hook prerouting priority -100"))
        #expect(text.contains("iifname { \"lan0\", \"wlan0\" } meta nfproto ipv4 meta l4proto { tcp, udp } th dport 53 counter name dns_redirected redirect to :53"))
        #expect(text.contains("type filter hook forward priority 0"))
        #expect(text.contains("iifname { \"lan0\", \"wlan0\" } tcp dport 853 counter name dot_refused reject with tcp reset"))
        #expect(text.contains("iifname { \"lan0\", \"wlan0\" } ip daddr @doh_ipv4 tcp dport 443 counter name doh_refused reject with tcp reset"))
    }

    @Test func a_loopback_listener_cannot_serve_the_lan_so_lan_dns_is_refused() {
        let set = FirewallRuleset(settings: Self.settings(.router, lan: ["lan0"]), listeners: Self.loopback, dohAddresses: [])
        #expect(set.lanIPv4 == nil && set.lanIPv6 == nil)
        #expect(set.text.contains("iifname { \"lan0\" } meta nfproto ipv4 udp dport 53 counter name dns_refused"))
    }

    @Test func doh_addresses_are_split_by_family_deduplicated_and_joined_with_the_extra_ones() {
        var settings = Self.settings()
        settings.extraDoHAddresses = ["192.0.2.10", "2001:db8::/64", "8.8.8.8"]
        let set = FirewallRuleset(settings: settings, listeners: Self.loopback, dohAddresses: ["8.8.8.8", "2001:4860:4860::8888", "not-an-address"])
        #expect(set.dohIPv4 == ["8.8.8.8", "192.0.2.10"])
        #expect(set.dohIPv6 == ["2001:4860:4860::8888", "2001:db8::/64"])
        #expect(set.text.contains("elements = { 8.8.8.8, 192.0.2.10 }"))
    }

    @Test func dot_and_doh_are_refused_for_tcp_and_udp_of_both_families() {
        let text = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: []).text
        for rule in [
            "tcp dport 853 counter name dot_refused reject with tcp reset",
            "udp dport 853 counter name dot_refused reject with icmpx type port-unreachable",
            "ip daddr @doh_ipv4 udp dport 443 counter name doh_refused reject with icmpx type port-unreachable",
            "ip6 daddr @doh_ipv6 tcp dport 443 counter name doh_refused reject with tcp reset",
        ] { #expect(text.contains(rule), "\(rule)") }
    }

    /// SPEC §9b: `dig -p 5353 @208.67.222.222` got the real answer. A listed resolver serves DNS on
    /// more than 53, 853 and 443 (DNSCrypt, DNS over QUIC on 784 and 8853, plain DNS on 5353), so
    /// every TCP and UDP port of its address is refused, IPv4 and IPv6, on both hooks.
    @Test func every_tcp_and_udp_port_of_a_listed_resolver_is_refused_in_both_families() {
        let text = FirewallRuleset(settings: Self.settings(.router, lan: ["lan0"]), listeners: [HostPortText(host: "::", port: 53)],
                                   dohAddresses: ["208.67.222.222", "2620:119:35::35"]).text
        for (match, set) in [("ip daddr", "@doh_ipv4"), ("ip6 daddr", "@doh_ipv6")] {
            // This machine's programs, with the helper's own marked sockets exempt.
            #expect(text.contains("\t\tmeta mark != 0x5c0f \(match) \(set) meta l4proto tcp counter name resolver_refused reject with tcp reset\n"))
            #expect(text.contains("\t\tmeta mark != 0x5c0f \(match) \(set) meta l4proto udp counter name resolver_refused reject with icmpx type port-unreachable\n"))
            // Forwarded from the LAN: never the helper's own traffic, so no exemption.
            #expect(text.contains("\t\tiifname { \"lan0\" } \(match) \(set) meta l4proto tcp counter name resolver_refused reject with tcp reset\n"))
            #expect(text.contains("\t\tiifname { \"lan0\" } \(match) \(set) meta l4proto udp counter name resolver_refused reject with icmpx type port-unreachable\n"))
            // Every port is recorded for the events, except 853, recorded (and refused) by the DoT rule before.
            #expect(text.contains("\(match) \(set) meta l4proto { tcp, udp } th dport != 853 update @attempts_"))
        }
        #expect(text.contains("\tcounter resolver_refused { }"))
        // HTTPS keeps its own count, ahead of the any-port rules.
        let https = text.range(of: "ip daddr @doh_ipv4 tcp dport 443 counter name doh_refused")
        let any = text.range(of: "ip daddr @doh_ipv4 meta l4proto tcp counter name resolver_refused")
        #expect(https != nil && any != nil && https!.lowerBound < any!.lowerBound)
        // Only forwarded traffic in the forward chain: the router's own DNS (input) is never matched there.
        #expect(!text.contains("hook input"))
    }

    /// On an IPv6-only LAN behind NAT64, 64:ff9b::808:808 is 8.8.8.8.
    @Test func ipv4_resolvers_are_refused_in_their_nat64_form_as_well() {
        #expect(FirewallRuleset.nat64("8.8.8.8") == "64:ff9b::808:808")
        #expect(FirewallRuleset.nat64("208.67.222.222") == "64:ff9b::d043:dede")
        #expect(FirewallRuleset.nat64("45.90.28.0/24") == "64:ff9b::2d5a:1c00/120")
        #expect(FirewallRuleset.nat64("45.90.28.7/24") == "64:ff9b::2d5a:1c00/120", "host bits cleared")
        #expect(FirewallRuleset.nat64("0.0.0.0/0") == "64:ff9b::0:0/96")
        #expect(FirewallRuleset.nat64("2001:db8::1") == nil && FirewallRuleset.nat64("8.8.8.8/33") == nil)
        let set = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: ["8.8.8.8", "2001:4860:4860::8888"])
        #expect(set.text.contains("elements = { 2001:4860:4860::8888, 64:ff9b::808:808 }"))
        // The doctor's count is of the resolvers' own addresses.
        #expect(set.dohIPv6 == ["2001:4860:4860::8888"])
    }

    /// In the kernel (a private network namespace, loopback only): a program's TCP and UDP to a
    /// listed resolver on 5353 and 784 are refused, a socket with the helper's mark (its upstream
    /// may be that resolver) gets through on the same ports, and ping still works.
    @Test func the_kernel_refuses_a_listed_resolver_on_any_port_except_to_the_helpers_marked_sockets() throws {
        let set = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: ["127.0.0.2"])
        let folder = NSTemporaryDirectory() + "scrolloff-firewall-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try set.text.write(toFile: folder + "/table.nft", atomically: true, encoding: .utf8)
        try """
            import socket, threading
            SO_MARK = 36
            def serve_tcp(port):
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.2", port)); s.listen(8)
                while True:
                    c, _ = s.accept(); c.sendall(b"hello"); c.close()
            def serve_udp(port):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.2", port))
                while True:
                    _, peer = s.recvfrom(64); s.sendto(b"hello", peer)
            for port in (5353, 784):
                threading.Thread(target=serve_tcp, args=(port,), daemon=True).start()
                threading.Thread(target=serve_udp, args=(port,), daemon=True).start()
            import time; time.sleep(0.3)
            def probe(kind, port, mark):
                try:
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM)
                    if mark: s.setsockopt(socket.SOL_SOCKET, SO_MARK, \(set.mark))
                    s.settimeout(2); s.connect(("127.0.0.2", port))
                    if kind == "udp": s.send(b"probe")
                    return "connected" if s.recv(16) == b"hello" else "no greeting"
                except (ConnectionRefusedError, PermissionError, ConnectionResetError):
                    return "refused"
                except Exception as e:
                    return type(e).__name__
            for kind in ("tcp", "udp"):
                for port in (5353, 784):
                    for mark in (False, True):
                        print(f"{kind} {port} {'marked' if mark else 'plain'} {probe(kind, port, mark)}")
            # ICMP echo (ping) carries no DNS and stays open.
            r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); r.settimeout(2)
            r.sendto(bytes([8, 0, 0xf7, 0xfe, 0, 1, 0, 0]), ("127.0.0.2", 0))
            try:
                while True:
                    data, _ = r.recvfrom(128)
                    if data[20] == 0: print("ping answered"); break
            except Exception as e:
                print("ping", type(e).__name__)
            """.write(toFile: folder + "/probe.py", atomically: true, encoding: .utf8)
        let script = """
            set -e
            ip link set lo up
            nft -f \(folder)/table.nft
            /usr/bin/python3 \(folder)/probe.py
            nft list counter inet scrolloff resolver_refused
            """
        let (status, output) = try Self.run(["/usr/bin/unshare", "-n", "/bin/bash", "-c", script])
        #expect(status == 0, "\(output)")
        for kind in ["tcp", "udp"] {
            for port in [5353, 784] {
                #expect(output.contains("\(kind) \(port) plain refused\n"), "\(output)")
                #expect(output.contains("\(kind) \(port) marked connected\n"), "\(output)")
            }
        }
        #expect(output.contains("ping answered"), "\(output)")
        #expect(!output.contains("packets 0 "), "the refusals were counted: \(output)")
    }

    @Test func the_shipped_resolver_addresses_are_all_valid_set_elements() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let items = FirewallController.readList(folder + "/blocklists/doh/resolver-addresses.txt")
        #expect(items.count > 50)
        for item in items { #expect(FirewallValues.addressFamily(item) != nil, "\(item)") }
        #expect(items.contains("8.8.8.8") && items.contains("2606:4700:4700::1111"))
    }

    /// `nft -c -f` in a private network namespace: the kernel's own parser accepts every variant.
    @Test(arguments: [
        (FirewallSettings.Mode.workstation, [HostPortText(host: "0.0.0.0", port: 53), HostPortText(host: "::1", port: 53)]),
        (.router, [HostPortText(host: "0.0.0.0", port: 53), HostPortText(host: "::1", port: 53)]),
        // dnat to single addresses of both families, and no loopback listener at all.
        (.router, [HostPortText(host: "192.168.1.1", port: 53), HostPortText(host: "fd00::1", port: 5353)]),
    ])
    func nft_accepts_the_generated_text(_ mode: FirewallSettings.Mode, _ listeners: [HostPortText]) throws {
        let set = FirewallRuleset(
            settings: Self.settings(mode, lan: ["lan0"]), listeners: listeners,
            dohAddresses: ["8.8.8.8", "45.90.28.0/24", "45.90.28.7", "2606:4700:4700::1111", "2a07:a8c0::/33"])
        let file = NSTemporaryDirectory() + "scrolloff-ruleset-\(UUID().uuidString).nft"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try set.text.write(toFile: file, atomically: true, encoding: .utf8)
        let (status, output) = try Self.run(["/usr/bin/unshare", "-n", "/usr/sbin/nft", "-c", "-f", file])
        #expect(status == 0, "\(output)\n\(set.text)")
    }

    @Test func new_doh_addresses_alone_change_only_the_sets() throws {
        let before = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: ["8.8.8.8"])
        let after = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: ["8.8.8.8", "203.0.113.9", "2001:db8::9"])
        #expect(after.setUpdate(from: before) == """
            flush set inet scrolloff doh_ipv4
            add element inet scrolloff doh_ipv4 { 8.8.8.8, 203.0.113.9 }
            flush set inet scrolloff doh_ipv6
            add element inet scrolloff doh_ipv6 { 2001:db8::9, 64:ff9b::808:808, 64:ff9b::cb00:7109 }

            """)
        // Anything else that differs replaces the table; nothing that differs needs no transaction.
        let router = Self.settings(.router, lan: ["lan0"])
        #expect(FirewallRuleset(settings: router, listeners: Self.loopback, dohAddresses: ["8.8.8.8"]).setUpdate(from: before) == nil)
        #expect(before.setUpdate(from: before) == nil)
    }

    /// In the kernel (a private network namespace): a refused DoT packet is counted, the DoH sets
    /// are refilled by the set-only transaction, and the count is still there afterwards (a whole
    /// table replacement would have started it from zero).
    @Test func a_doh_set_update_in_the_kernel_keeps_the_counters() throws {
        let before = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: ["8.8.8.8"])
        let after = FirewallRuleset(settings: Self.settings(), listeners: Self.loopback, dohAddresses: ["8.8.8.8", "203.0.113.9"])
        let update = try #require(after.setUpdate(from: before))
        let folder = NSTemporaryDirectory() + "scrolloff-nft-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try before.text.write(toFile: folder + "/table.nft", atomically: true, encoding: .utf8)
        try update.write(toFile: folder + "/update.nft", atomically: true, encoding: .utf8)
        let script = """
            set -e
            ip link set lo up
            nft -f \(folder)/table.nft
            echo probe > /dev/udp/127.0.0.1/853 || true
            nft -f \(folder)/update.nft
            nft list counter inet scrolloff dot_refused
            nft list set inet scrolloff doh_ipv4
            """
        let (status, output) = try Self.run(["/usr/bin/unshare", "-n", "/bin/bash", "-c", script])
        #expect(status == 0, "\(output)")
        #expect(output.contains("packets 1 "), "\(output)")
        #expect(output.contains("elements = { 8.8.8.8, 203.0.113.9 }"), "\(output)")
    }

    static func run(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// Attempts per device for the metrics and doctor (SPEC §9b): by kind, bounded, most first.
@Suite struct ClientAttemptTallyTests {
    static func caught(_ client: String, port: Int, packets: UInt64) -> CaughtAttempt {
        CaughtAttempt(attempt: BypassAttempt(client: client, server: "8.8.8.8", port: port), packets: packets)
    }

    @Test func packets_add_up_per_device_and_kind() {
        var tally = ClientAttemptTally()
        tally.add([Self.caught("10.0.0.2", port: 53, packets: 3), Self.caught("10.0.0.2", port: 853, packets: 1)])
        tally.add([Self.caught("10.0.0.2", port: 53, packets: 2), Self.caught("10.0.0.3", port: 443, packets: 9)])
        #expect(tally.counts == ["10.0.0.2": ["dns": 5, "dot": 1], "10.0.0.3": ["doh": 9]])
        #expect(tally.top(3).map(\.client) == ["10.0.0.3", "10.0.0.2"])
        #expect(tally.top(3).map(\.attempts) == [9, 6])
    }

    @Test func addresses_past_the_bound_are_counted_as_other() {
        var tally = ClientAttemptTally()
        let many = (0..<(ClientAttemptTally.maxClients + 44)).map { Self.caught("fd00::\(String($0, radix: 16))", port: 443, packets: 1) }
        tally.add(many)
        #expect(tally.counts.count == ClientAttemptTally.maxClients + 1)
        #expect(tally.counts[ClientAttemptTally.other] == ["doh": 44])
        // A device already known keeps its own series.
        tally.add([Self.caught("fd00::0", port: 443, packets: 1)])
        #expect(tally.counts["fd00::0"] == ["doh": 2])
    }
}

/// Bypass attempts as events (SPEC §9b): worded for people, and at most once an hour each.
@Suite struct BypassEventTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func each_port_has_its_sentence_and_a_local_program_is_not_called_a_device() {
        let dns = BypassAttempt(client: "192.168.1.20", server: "8.8.8.8", port: 53)
        #expect(dns.message(local: false) == "A device (192.168.1.20) asked 8.8.8.8 for DNS directly; Scroll Off answered instead.")
        #expect(dns.message(local: true) == "A program on this machine asked 8.8.8.8 for DNS directly; Scroll Off answered instead.")
        #expect(BypassAttempt(client: "a", server: "1.1.1.1", port: 853).message(local: false).contains("DNS over TLS to 1.1.1.1"))
        #expect(BypassAttempt(client: "a", server: "1.1.1.1", port: 443).message(local: false).contains("DNS over HTTPS to 1.1.1.1"))
        #expect(BypassAttempt(client: "192.168.1.20", server: "208.67.222.222", port: 5353).message(local: false)
            == "A device (192.168.1.20) tried the DNS resolver 208.67.222.222 on port 5353; the firewall refused it.")
    }

    /// Another port of a listed resolver is its own kind in the per-device counts, not DoH.
    @Test func another_port_of_a_listed_resolver_is_counted_as_its_own_kind() {
        #expect(ClientAttemptTally.kind(ofPort: 5353) == "resolver" && ClientAttemptTally.kind(ofPort: 784) == "resolver")
        #expect(ClientAttemptTally.kind(ofPort: 443) == "doh" && ClientAttemptTally.kind(ofPort: 853) == "dot")
    }

    @Test func the_same_attempt_is_an_event_once_an_hour() {
        var limiter = BypassEventLimiter()
        let attempt = BypassAttempt(client: "192.168.1.20", server: "8.8.8.8", port: 53)
        #expect(limiter.admit([attempt, attempt], now: now) == [attempt])
        #expect(limiter.admit([attempt], now: now.addingTimeInterval(3599)).isEmpty)
        #expect(limiter.admit([attempt], now: now.addingTimeInterval(3601)) == [attempt])
    }

    @Test func a_flood_of_distinct_attempts_gives_at_most_20_events_a_read() {
        var limiter = BypassEventLimiter()
        let flood = (0..<500).map { BypassAttempt(client: "10.0.\($0 / 256).\($0 % 256)", server: "8.8.8.8", port: 53) }
        #expect(limiter.admit(flood, now: now).count == BypassEventLimiter.perRead)
        // The rest are not lost for good: the next read may admit them.
        #expect(limiter.admit(flood, now: now.addingTimeInterval(2)).count == BypassEventLimiter.perRead)
    }
}
