import ControlAPI
import ControlTransport
@testable import DoctorChecks
import Foundation
import Testing

/// Every `scrolloff doctor` verdict from facts alone: PASS or FAIL, the words, and the fix.
struct DoctorVerdictTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let port53 = [DoctorListener(transport: "udp", host: "127.0.0.1", port: 53), DoctorListener(transport: "tcp", host: "127.0.0.1", port: 53)]
    static let port5300 = [DoctorListener(transport: "udp", host: "127.0.0.1", port: 5300)]

    static func answer(_ rcode: String, _ addresses: [String] = [], ms: Int = 3) -> ProbeResult {
        .answered(ProbeAnswer(rcode: rcode, addresses: addresses, milliseconds: ms))
    }

    // MARK: upstreams

    @Test func every_upstream_down_fails_and_says_answers_come_from_the_cache() throws {
        let router = NameServer(host: "192.168.1.1")
        let quad9 = NameServer(host: "9.9.9.9")
        let down = try #require(DoctorVerdicts.upstreams([
            DoctorUpstreamHealth(upstream: router, up: false, consecutiveFailures: 7),
            DoctorUpstreamHealth(upstream: quad9, up: false, consecutiveFailures: 3),
        ]))
        #expect(down.status == .fail)
        #expect(down.detail.contains("every upstream is down") && down.detail.contains("192.168.1.1 (7 failures in a row)"), "\(down)")
        #expect(down.detail.contains("stale"))
        #expect(down.fix != nil)
        let one = try #require(DoctorVerdicts.upstreams([
            DoctorUpstreamHealth(upstream: router, up: false, consecutiveFailures: 7),
            DoctorUpstreamHealth(upstream: quad9, up: true, consecutiveFailures: 0),
        ]))
        #expect(one.status == .pass && one.detail.contains("1 of 2"), "\(one)")
        let up = try #require(DoctorVerdicts.upstreams([DoctorUpstreamHealth(upstream: router, up: true, consecutiveFailures: 0)]))
        #expect(up.status == .pass)
        // A helper that does not report health gets no upstreams check, rather than a wrong one.
        #expect(DoctorVerdicts.upstreams([]) == nil)
    }

    // MARK: resolver

    struct ResolverCase: Sendable, CustomTestStringConvertible {
        var label: String
        var resolvConf: String?
        var hosts = ResolverSetup.HostsLookup.resolvConfOnly
        var resolved: [NameServer]?
        var ignored: [NameServer] = []
        var links: [NameServer: String] = [:]
        var listeners: [DoctorListener]
        var status: DoctorCheck.Status
        var detail: String
        var fix: String?
        var testDescription: String { label }
    }

    static let resolverCases: [ResolverCase] = [
        ResolverCase(label: "plain resolv.conf at the sinkhole", resolvConf: "nameserver 127.0.0.1\n", listeners: port53,
                     status: .pass, detail: "/etc/resolv.conf → 127.0.0.1: the sinkhole"),
        ResolverCase(label: "no resolv.conf: glibc asks 127.0.0.1", resolvConf: nil, listeners: port53,
                     status: .pass, detail: "→ 127.0.0.1: the sinkhole"),
        ResolverCase(label: "resolv.conf elsewhere", resolvConf: "nameserver 192.168.1.1\n", listeners: port53, status: .fail,
                     detail: "/etc/resolv.conf → 192.168.1.1, not the sinkhole (127.0.0.1:53)",
                     fix: "`echo 'nameserver 127.0.0.1' | sudo tee /etc/resolv.conf`"),
        ResolverCase(label: "a second server lets queries pass by", resolvConf: "nameserver 127.0.0.1\nnameserver 8.8.8.8\n", listeners: port53,
                     status: .fail, detail: "also asks 8.8.8.8, which answers without the sinkhole", fix: "Make it the only nameserver"),
        ResolverCase(label: "sinkhole on port 5300: resolv.conf has no port", resolvConf: "nameserver 127.0.0.1\n", listeners: port5300,
                     status: .fail, detail: "asks 127.0.0.1 on port 53, but the sinkhole listens there on port 5300",
                     fix: "`--listen 127.0.0.1:53`"),
        ResolverCase(label: "elsewhere and no port 53 listener", resolvConf: "nameserver 10.0.0.1\n", listeners: port5300,
                     status: .fail, detail: "not the sinkhole (127.0.0.1:5300)", fix: "listens on no port 53"),
        ResolverCase(label: "resolved stub forwarding to the sinkhole", resolvConf: "nameserver 127.0.0.53\noptions edns0\n",
                     resolved: [NameServer(host: "127.0.0.1")], listeners: port53, status: .pass,
                     detail: "/etc/resolv.conf → systemd-resolved → 127.0.0.1: the sinkhole"),
        ResolverCase(label: "resolved stub with a per-link server besides", resolvConf: "nameserver 127.0.0.53\n",
                     resolved: [NameServer(host: "127.0.0.1"), NameServer(host: "192.168.1.1")], listeners: port53, status: .fail,
                     detail: "also asks 192.168.1.1", fix: "`DNS=127.0.0.1` and `Domains=~.`"),
        ResolverCase(label: "resolved proxy stub forwarding elsewhere", resolvConf: "nameserver 127.0.0.54\n",
                     resolved: [NameServer(host: "9.9.9.9")], listeners: port53, status: .fail,
                     detail: "systemd-resolved → 9.9.9.9, not the sinkhole", fix: "sudo systemctl restart systemd-resolved"),
        ResolverCase(label: "resolved with the port named", resolvConf: "nameserver 127.0.0.53\n",
                     resolved: [NameServer(host: "127.0.0.1", port: 5300)], listeners: port5300, status: .pass, detail: "127.0.0.1:5300: the sinkhole"),
        ResolverCase(label: "resolved without the port", resolvConf: "nameserver 127.0.0.53\n",
                     resolved: [NameServer(host: "127.0.0.1")], listeners: port5300, status: .fail,
                     detail: "listens there on port 5300", fix: "`DNS=127.0.0.1:5300`"),
        ResolverCase(label: "resolved's servers unreadable", resolvConf: "nameserver 127.0.0.53\n", resolved: nil, listeners: port53,
                     status: .fail, detail: "whose servers could not be read", fix: "`resolvectl dns`"),
        ResolverCase(label: "resolved's ~. scope at the sinkhole, a DHCP server only for its link's domain",
                     resolvConf: "nameserver 127.0.0.53\n", resolved: [NameServer(host: "127.0.0.1")], ignored: [NameServer(host: "192.168.1.1")],
                     listeners: port53, status: .pass,
                     detail: "systemd-resolved → 127.0.0.1: the sinkhole (192.168.1.1 only for its link's own domains)"),
        ResolverCase(label: "a VPN link with its own ~. takes every name besides the sinkhole",
                     resolvConf: "nameserver 127.0.0.53\n", resolved: [NameServer(host: "127.0.0.1"), NameServer(host: "10.8.0.1")],
                     links: [NameServer(host: "10.8.0.1"): "Link 5 (tun0)"], listeners: port53, status: .fail,
                     detail: "systemd-resolved also asks 10.8.0.1 of Link 5 (tun0), which takes every name (`~.`) besides the sinkhole",
                     fix: "Give Link 5 (tun0) the sinkhole as DNS server too"),
        ResolverCase(label: "a link's ~. with no sinkhole at all is resolved.conf's to fix",
                     resolvConf: "nameserver 127.0.0.53\n", resolved: [NameServer(host: "10.8.0.1")],
                     links: [NameServer(host: "10.8.0.1"): "Link 5 (tun0)"], listeners: port53, status: .fail,
                     detail: "systemd-resolved → 10.8.0.1, not the sinkhole", fix: "`Domains=~.`"),
        ResolverCase(label: "nss-resolve asks resolved even though resolv.conf names the router",
                     resolvConf: "nameserver 192.168.1.1\n", hosts: ResolverSetup.HostsLookup(asksResolved: true, thenResolvConf: false),
                     resolved: [NameServer(host: "127.0.0.1")], listeners: port53, status: .pass,
                     detail: "/etc/nsswitch.conf → systemd-resolved → 127.0.0.1: the sinkhole"),
        ResolverCase(label: "nss-resolve asks resolved, which forwards elsewhere",
                     resolvConf: "nameserver 127.0.0.1\n", hosts: ResolverSetup.HostsLookup(asksResolved: true, thenResolvConf: false),
                     resolved: [NameServer(host: "9.9.9.9")], listeners: port53, status: .fail,
                     detail: "/etc/nsswitch.conf → systemd-resolved → 9.9.9.9, not the sinkhole", fix: "`Domains=~.`"),
        ResolverCase(label: "nss-resolve whose servers are unreadable",
                     resolvConf: "nameserver 127.0.0.1\n", hosts: ResolverSetup.HostsLookup(asksResolved: true, thenResolvConf: false),
                     resolved: nil, listeners: port53, status: .fail,
                     detail: "/etc/nsswitch.conf hands queries to systemd-resolved (nss-resolve), whose servers could not be read", fix: "`resolvectl dns`"),
        ResolverCase(label: "nss-resolve without a final answer falls back to resolv.conf's router",
                     resolvConf: "nameserver 192.168.1.1\n", hosts: ResolverSetup.HostsLookup(asksResolved: true, thenResolvConf: true),
                     resolved: [NameServer(host: "127.0.0.1")], listeners: port53, status: .fail,
                     detail: "also asks 192.168.1.1, which answers without the sinkhole", fix: "`Domains=~.`"),
    ]

    @Test(arguments: resolverCases)
    func resolver_passes_only_when_every_server_asked_is_the_sinkhole(_ c: ResolverCase) {
        let seen = DoctorVerdicts.ResolverObservation(
            resolvConfPath: "/etc/resolv.conf", resolvConf: c.resolvConf, hostsLookup: c.hosts,
            resolvedSource: "/run/systemd/resolve/resolv.conf", resolvedServers: c.resolved, resolvedIgnored: c.ignored, resolvedLinks: c.links)
        let check = DoctorVerdicts.resolver(seen, listeners: c.listeners, localAddresses: [])
        #expect(check.name == "resolver")
        #expect(check.status == c.status, "\(check)")
        #expect(check.detail.contains(c.detail), "\(check.detail)")
        if let fix = c.fix { #expect(check.fix?.contains(fix) == true, "\(check.fix ?? "no fix")") } else { #expect(check.fix == nil) }
    }

    // MARK: blocked probe

    static func probe(mode: String, entry: String? = "instagram") -> DoctorProbeFacts {
        DoctorProbeFacts(host: "127.0.0.1", port: 53, blockedName: entry == nil ? "doctor-probe.scrolloff.invalid" : "instagram.com",
                         blockedEntry: entry, reservedName: "doctor-probe.scrolloff.invalid", blockingMode: mode)
    }

    @Test(arguments: [
        ("null", answer("NOERROR", ["0.0.0.0"]), DoctorCheck.Status.pass, "instagram.com (blocked by instagram) → NOERROR 0.0.0.0 in 3 ms"),
        ("null", answer("NOERROR", ["157.240.1.1"]), .fail, "was answered NOERROR 157.240.1.1 by 127.0.0.1, not NOERROR 0.0.0.0"),
        ("null", answer("NOERROR"), .fail, "not NOERROR 0.0.0.0"),
        ("null", answer("NXDOMAIN"), .fail, "not NOERROR 0.0.0.0"),
        ("nxdomain", answer("NXDOMAIN"), .pass, "→ NXDOMAIN in 3 ms"),
        ("nxdomain", answer("NOERROR", ["0.0.0.0"]), .fail, "not NXDOMAIN"),
        ("refused", answer("REFUSED"), .pass, "→ REFUSED"),
        ("null", answer("NOERROR", ["0.0.0.0"], ms: 499), .pass, "in 499 ms"),
        ("null", answer("NOERROR", ["0.0.0.0"], ms: 500), .fail, "in 500 ms, over the 500 ms a blocked name may take"),
        ("null", .failed("no answer within 2 s"), .fail, "got no answer from 127.0.0.1: no answer within 2 s"),
    ] as [(String, ProbeResult, DoctorCheck.Status, String)])
    func blocked_probe_wants_the_modes_answer_within_500_ms(mode: String, result: ProbeResult, status: DoctorCheck.Status, detail: String) {
        let check = DoctorVerdicts.blockedProbe(Self.probe(mode: mode), result, profile: "default")
        #expect(check.status == status, "\(check)")
        #expect(check.detail.contains(detail), "\(check.detail)")
        #expect((check.fix != nil) == (status == .fail))
    }

    @Test func blocked_probe_says_when_it_asked_the_reserved_name() {
        let check = DoctorVerdicts.blockedProbe(Self.probe(mode: "null", entry: nil), Self.answer("NOERROR", ["0.0.0.0"]), profile: "kids")
        #expect(check.status == .pass)
        #expect(check.detail.hasPrefix("doctor-probe.scrolloff.invalid (the reserved probe name: nothing is blocked for profile kids now) → NOERROR 0.0.0.0"))
    }

    // MARK: normal probe

    @Test(arguments: [
        (answer("NOERROR", ["93.184.215.14"]), DoctorCheck.Status.pass, "example.com → 93.184.215.14 in 3 ms", nil),
        (answer("NOERROR", ["0.0.0.0"]), .fail, "blocked by a rule or list", "--probe-name NAME"),
        (answer("NOERROR"), .fail, "resolves to no address", "--probe-name NAME"),
        (answer("NXDOMAIN"), .fail, "does not exist upstream", "--probe-name NAME"),
        (answer("SERVFAIL"), .fail, "example.com → SERVFAIL instead of an address: the upstream resolvers did not resolve it", "`--upstream ADDR`"),
        (.failed("no answer within 5 s"), .fail, "got no answer from 127.0.0.1: no answer within 5 s", "online"),
    ] as [(ProbeResult, DoctorCheck.Status, String, String?)])
    func normal_probe_wants_a_real_address(result: ProbeResult, status: DoctorCheck.Status, detail: String, fix: String?) {
        let check = DoctorVerdicts.normalProbe(name: "example.com", target: NameServer(host: "127.0.0.1"), result)
        #expect(check.status == status, "\(check)")
        #expect(check.detail.contains(detail), "\(check.detail)")
        if let fix { #expect(check.fix?.contains(fix) == true, "\(check.fix ?? "no fix")") } else { #expect(check.fix == nil, "\(check.fix ?? "")") }
    }

    // MARK: forwarding loop

    static let stub = NameServer(host: "127.0.0.53")

    @Test(arguments: [
        ([stub], [NameServer(host: "127.0.0.1")], "the helper forwards to 127.0.0.53 (systemd-resolved), which sends it back to the sinkhole at 127.0.0.1"),
        ([NameServer(host: "127.0.0.54")], [NameServer(host: "127.0.0.1")], "forwards to 127.0.0.54 (systemd-resolved)"),
        ([NameServer(host: "9.9.9.9"), NameServer(host: "127.0.0.1")], nil, "the helper forwards to 127.0.0.1, which is the sinkhole itself"),
        ([stub], [NameServer(host: "192.168.1.1")], nil),
        ([stub], nil, nil),
        ([NameServer(host: "9.9.9.9")], [NameServer(host: "127.0.0.1")], nil),
        // The sinkhole's address on another port is another server (a second resolver there).
        ([NameServer(host: "127.0.0.1", port: 5353)], nil, nil),
    ] as [([NameServer], [NameServer]?, String?)])
    func a_forwarding_loop_is_an_upstream_that_leads_back_to_the_sinkhole(upstreams: [NameServer], resolved: [NameServer]?, loop: String?) {
        let found = DoctorVerdicts.forwardingLoop(upstreams: upstreams, listeners: Self.port53, localAddresses: [], resolvedServers: resolved)
        if let loop { #expect(found?.contains(loop) == true, "\(found ?? "no loop")") } else { #expect(found == nil, "\(found ?? "")") }
    }

    @Test func a_servfail_through_resolveds_stub_suggests_the_loop_fix() {
        let check = DoctorVerdicts.normalProbe(name: "example.com", target: NameServer(host: "127.0.0.1"), Self.answer("SERVFAIL"), upstreams: [Self.stub])
        #expect(check.status == .fail)
        #expect(check.fix?.contains("systemd-resolved's stub, which sends names back if it points at the sinkhole: a forwarding loop: set `[dns] upstreams = [...]`") == true, "\(check.fix ?? "")")
        let direct = DoctorVerdicts.normalProbe(name: "example.com", target: NameServer(host: "127.0.0.1"), Self.answer("SERVFAIL"), upstreams: [NameServer(host: "9.9.9.9")])
        #expect(direct.fix?.contains("`--upstream ADDR`") == true)
    }

    @Test func a_forwarding_loop_fails_the_normal_probe_with_the_upstreams_to_set() {
        let check = DoctorVerdicts.normalProbe(name: "example.com", loop: "the helper forwards to 127.0.0.53 (systemd-resolved), which sends it back to the sinkhole at 127.0.0.1")
        #expect(check.name == "normal_probe" && check.status == .fail)
        #expect(check.detail.hasPrefix("example.com not asked: the helper forwards to 127.0.0.53"))
        #expect(check.fix?.hasPrefix("forwarding loop: set `[dns] upstreams = [...]` in /etc/scrolloff/scrolloff.toml to your router or a public resolver") == true)
    }

    @Test func facts_from_a_helper_without_upstreams_still_decode() throws {
        let facts = DoctorFacts(
            version: "1", pid: 7, now: Self.now, profile: "default", listeners: Self.port53, upstreams: [Self.stub, NameServer(host: "::1", port: 5300)],
            probe: nil, lists: [], clock: Self.clock(offset: 0), database: DoctorDatabaseFacts(path: "/db", problems: []))
        let data = ControlJSON.encode(facts)
        #expect(try ControlJSON.decoder().decode(DoctorFacts.self, from: data) == facts)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["upstreams"] as? [[String: Any]])?.first?["host"] as? String == "127.0.0.53")
        object["upstreams"] = nil
        let older = try ControlJSON.decoder().decode(DoctorFacts.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(older.upstreams.isEmpty && older.listeners == facts.listeners)
    }

    // MARK: lists

    @Test(arguments: [
        (Date?.some(now.addingTimeInterval(-3 * 3600)), nil as String?, DoctorCheck.Status.pass, "social refreshed 3 h ago (every 24 h)"),
        (now.addingTimeInterval(-48 * 3600), nil, .pass, "refreshed 2 d ago"),
        (now.addingTimeInterval(-48 * 3600 - 1), "HTTP 404", .fail, "was last refreshed 2 d ago, more than twice its period of 24 h (last try: HTTP 404)"),
        (nil, "could not resolve host", .fail, "social was never downloaded (last try: could not resolve host)"),
    ])
    func a_list_passes_within_twice_its_period(last: Date?, error: String?, status: DoctorCheck.Status, detail: String) {
        let checks = DoctorVerdicts.lists([DoctorListFacts(name: "social", lastSuccess: last, periodSeconds: 86_400, lastError: error)], now: Self.now)
        #expect(checks.count == 1)
        let check = checks[0]
        #expect(check.name == "list:social")
        #expect(check.status == status, "\(check)")
        #expect(check.detail == detail || check.detail.contains(detail), "\(check.detail)")
        #expect(check.fix == (status == .fail ? "`scrolloff lists update social`" : nil))
    }

    @Test func the_firewall_check_names_the_devices_that_tried_most_and_old_facts_still_decode() throws {
        var facts = DoctorFirewallFacts(mode: "router", tableInPlace: true, dohAddresses: 80,
                                        attempts: ["dns_redirected": 4, "dot_refused": 2, "doh_refused": 1])
        facts.topClients = [DoctorFirewallClient(address: "10.0.0.7", attempts: 5), DoctorFirewallClient(address: "10.0.0.9", attempts: 2)]
        let check = DoctorVerdicts.firewall(facts)
        #expect(check.status == .pass)
        #expect(check.detail.hasSuffix("since the helper started; most from 10.0.0.7 (5), 10.0.0.9 (2)"), "\(check.detail)")
        // A helper from before per-device counts sends no topClients.
        let old = #"{"mode":"workstation","tableInPlace":true,"dohAddresses":3,"attempts":{}}"#
        let decoded = try JSONDecoder().decode(DoctorFirewallFacts.self, from: Data(old.utf8))
        #expect(decoded.topClients.isEmpty)
        #expect(DoctorVerdicts.firewall(decoded).detail.hasSuffix("since the helper started"))
    }

    /// Every counter of the table reaches doctor: DNS refused for want of a listener of its family
    /// too, named only when it happened.
    @Test func the_firewall_check_counts_each_bypass_and_dns_refused_for_want_of_a_listener() {
        let facts = DoctorFirewallFacts(mode: "workstation", tableInPlace: true, dohAddresses: 80,
                                        attempts: ["dns_redirected": 4, "dns_refused": 3, "dot_refused": 2, "doh_refused": 1])
        #expect(DoctorVerdicts.firewall(facts).detail == "table inet scrolloff in place (workstation); 4 DNS questions to other resolvers "
            + "answered by Scroll Off, 3 refused (no listener of their address family), 2 DNS-over-TLS and 1 DNS-over-HTTPS connections "
            + "refused (80 resolver addresses) since the helper started")
        let none = DoctorFirewallFacts(mode: "router", tableInPlace: true, dohAddresses: 80, attempts: ["dns_redirected": 4])
        #expect(!DoctorVerdicts.firewall(none).detail.contains("no listener"))
    }

    @Test func no_lists_is_one_passing_check() {
        #expect(DoctorVerdicts.lists([], now: Self.now) == [.pass("lists", "no downloaded lists to keep fresh")])
    }

    // MARK: clock

    static func clock(offset: Int64, basis: String = "sameBootElapsed", tamper: [DoctorTamperEvent] = []) -> DoctorClockFacts {
        DoctorClockFacts(trusted: now, wall: now.addingTimeInterval(TimeInterval(offset)), offsetSeconds: offset, thresholdSeconds: 600,
                         basis: basis, recentTamper: tamper, tamperWindowSeconds: 86_400)
    }

    @Test(arguments: [
        (clock(offset: 2), DoctorCheck.Status.pass, "agrees with the trusted clock (2 s apart)"),
        (clock(offset: -600), .pass, "600 s apart"),
        (clock(offset: 601), .fail, "the system clock is 10 min 1 s ahead of the trusted clock"),
        (clock(offset: -7200), .fail, "the system clock is 2 h behind the trusted clock (more than 10 min)"),
        (clock(offset: -86_400 * 400, basis: "awaitingWallClock"), .fail, "before this build was made"),
        (clock(offset: 0, tamper: [DoctorTamperEvent(time: now.addingTimeInterval(-3600), message: "The system clock moved back by 120 min; every rule keeps to the trusted clock.")]),
         .pass, "1 clock change caught in the last 24 h, latest at 2026-11-18T10:06:40Z: The system clock moved back by 120 min"),
    ])
    func clock_fails_while_the_clocks_disagree(facts: DoctorClockFacts, status: DoctorCheck.Status, detail: String) {
        let check = DoctorVerdicts.clock(facts)
        #expect(check.status == status, "\(check)")
        #expect(check.detail.contains(detail), "\(check.detail)")
        #expect((check.fix?.contains("sudo timedatectl set-ntp true") ?? false) == (status == .fail))
    }

    /// A trusted clock left ahead (a start with the wall clock hours ahead) never runs back by
    /// itself: `set-ntp true` alone cannot help, so the fix names what can (SPEC §11 clock recovery).
    @Test func a_system_clock_behind_the_trusted_clock_is_told_how_ntp_or_roots_clock_reset_brings_it_back() {
        let behind = DoctorVerdicts.clock(Self.clock(offset: -3 * 3600))
        #expect(behind.status == .fail)
        let fix = behind.fix ?? ""
        #expect(fix.contains("System clock synchronized: yes"), "\(fix)")
        #expect(fix.contains("sudo systemctl stop scrolloff-dns && sudo scrolloff-dns clock reset && sudo systemctl start scrolloff-dns"), "\(fix)")
        // Ahead, the system clock itself is what is wrong: NTP sets it right, nothing to reset.
        let ahead = DoctorVerdicts.clock(Self.clock(offset: 3 * 3600))
        #expect(!(ahead.fix ?? "").contains("clock reset"), "\(String(describing: ahead.fix))")
    }

    // MARK: database, canary, listeners, helper

    @Test func database_fails_with_sqlites_findings_and_a_recovery_command() {
        #expect(DoctorVerdicts.database(DoctorDatabaseFacts(path: "/var/lib/scrolloff/scrolloff.sqlite", problems: [])).status == .pass)
        let bad = DoctorVerdicts.database(DoctorDatabaseFacts(path: "/s/db.sqlite", problems: ["*** in database main ***", "Page 7: btreeInitPage() returns error code 11"]))
        #expect(bad.status == .fail)
        #expect(bad.detail == "PRAGMA quick_check of /s/db.sqlite found: *** in database main ***; Page 7: btreeInitPage() returns error code 11")
        #expect(bad.fix?.contains("sudo sqlite3 /s/db.sqlite .recover | sudo sqlite3 /s/db.sqlite.recovered") == true)
    }

    @Test func database_fails_while_state_writes_fail_with_how_long_and_how_many_attempts() {
        let since = Date(timeIntervalSince1970: 1_795_003_200)
        let facts = DoctorDatabaseFacts(path: "/var/lib/scrolloff/scrolloff.sqlite", problems: [],
                                        writeFailure: DoctorWriteFailure(since: since, attempts: 43, error: "database or disk is full"))
        let check = DoctorVerdicts.database(facts, now: since.addingTimeInterval(12 * 60))
        #expect(check.status == .fail)
        #expect(check.detail.hasPrefix("state writes failing for 12 min, 43 attempts: database or disk is full."), "\(check.detail)")
        #expect(check.fix == "Free space where the state lives: `df -h /var/lib/scrolloff`, then remove what fills it.")
        // The field travels as `write_failure` and is optional for an older helper.
        let json = String(decoding: (try? JSONEncoder().encode(facts)) ?? Data(), as: UTF8.self)
        #expect(json.contains("\"write_failure\""))
        let old = try? JSONDecoder().decode(DoctorDatabaseFacts.self, from: Data(#"{"path":"/s","problems":[]}"#.utf8))
        #expect(old == DoctorDatabaseFacts(path: "/s", problems: []))
    }

    @Test(arguments: [
        (answer("NXDOMAIN"), DoctorCheck.Status.pass, "use-application-dns.net → NXDOMAIN through 127.0.0.1"),
        (answer("NOERROR", ["104.16.1.1"]), .fail, "→ NOERROR 104.16.1.1 through 127.0.0.1: Firefox may turn on its own DNS over HTTPS"),
        (.failed("connection refused: nothing listens there"), .fail, "got no answer through 127.0.0.1 (the system resolver): connection refused"),
    ] as [(ProbeResult, DoctorCheck.Status, String)])
    func canary_must_be_nxdomain_through_the_system_resolver(result: ProbeResult, status: DoctorCheck.Status, detail: String) {
        let check = DoctorVerdicts.canary(through: NameServer(host: "127.0.0.1"), result)
        #expect(check.status == status)
        #expect(check.detail.contains(detail), "\(check.detail)")
    }

    @Test func a_silent_canary_while_the_helper_is_down_says_to_start_it() {
        let down = DoctorVerdicts.canary(through: NameServer(host: "127.0.0.1"), .failed("connection refused"), helperAnswers: false)
        #expect(down.status == .fail && down.fix == DoctorVerdicts.startHelper)
        let up = DoctorVerdicts.canary(through: NameServer(host: "127.0.0.1"), .failed("connection refused"))
        #expect(up.fix?.hasPrefix("Point the system resolver at the sinkhole") == true)
    }

    @Test func listeners_pass_only_when_every_socket_answers() {
        let udp = DoctorListener(transport: "udp", host: "127.0.0.1", port: 53)
        let tcp = DoctorListener(transport: "tcp", host: "127.0.0.1", port: 53)
        let up = DoctorVerdicts.listeners([(udp, Self.answer("NOERROR", ["0.0.0.0"], ms: 1)), (tcp, Self.answer("NOERROR", ["0.0.0.0"], ms: 2))])
        #expect(up == .pass("listeners", "2 listeners answer: udp 127.0.0.1:53 (1 ms), tcp 127.0.0.1:53 (2 ms)"))
        let half = DoctorVerdicts.listeners([(udp, Self.answer("NOERROR")), (tcp, .failed("no answer within 2 s"))])
        #expect(half.status == .fail)
        #expect(half.detail == "1 of 2 listeners did not answer a query: tcp 127.0.0.1:53: no answer within 2 s")
        let none = DoctorVerdicts.listeners([])
        #expect(none.status == .fail && none.fix?.contains("journalctl -u scrolloff-dns") == true)
    }

    @Test(arguments: [
        (ControlClientError.helperUnreachable(path: "/s", reason: .socketMissing), "sudo systemctl start scrolloff-dns"),
        (.helperUnreachable(path: "/s", reason: .nobodyListening), "make run"),
        (.permissionDenied(path: "/s"), "sudo usermod -aG scrolloff $USER"),
        (.timedOut(path: "/s", seconds: 10), "sudo systemctl restart scrolloff-dns"),
        (.refused(status: 403, error: ControlError(code: "forbidden", message: "not yours")), "--profile NAME"),
        (.refused(status: 404, error: ControlError(code: "not_found", message: "There is no endpoint /v1/doctor.")), "same build"),
        (.badAnswer(path: "/s", detail: "garbage"), "same build"),
    ])
    func an_unreachable_helper_fails_with_how_to_reach_it(error: ControlClientError, fix: String) {
        let check = DoctorVerdicts.helper(unreachable: error, socket: "/s")
        #expect(check.name == "helper" && check.status == .fail)
        #expect(check.fix?.contains(fix) == true, "\(check.fix ?? "")")
    }

    // MARK: report

    @Test func report_is_ok_only_when_every_check_passes_and_keeps_one_json_shape() throws {
        let passing = DoctorReport(checks: [.pass("helper", "up")])
        #expect(passing.ok)
        let failing = DoctorReport(checks: [.pass("helper", "up"), DoctorVerdicts.needsHelper("clock")])
        #expect(!failing.ok)
        let object = try #require(try JSONSerialization.jsonObject(with: ControlJSON.encode(failing)) as? [String: Any])
        #expect(object["ok"] as? Bool == false)
        let checks = try #require(object["checks"] as? [[String: Any]])
        #expect(checks.map { Set($0.keys) } == [["name", "status", "detail", "fix"], ["name", "status", "detail", "fix"]])
        #expect(checks[0]["fix"] is NSNull)
        #expect(checks[1]["status"] as? String == "fail")
        #expect(try ControlJSON.decoder().decode(DoctorReport.self, from: ControlJSON.encode(failing)) == failing)
    }
}
