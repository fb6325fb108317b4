import Foundation
import Testing

/// The three network bypasses of SPEC §9b tried as a motivated user would, against the real helper
/// and its real nftables table, in namespaces of our own (`FirewallLab`): asking another resolver,
/// DNS over TLS, and DNS over HTTPS to a resolver's address. Each is closed while the helper runs.
@Suite("Firewall: the bypasses are closed (SPEC §9b)", .serialized)
struct FirewallEndToEndTests {
    static let routerSettings = "enabled = true\nmode = \"router\"\nlan_interfaces = [\"lan0\"]"

    @Test func a_device_behind_the_router_cannot_bypass_the_sinkhole() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        // Other tools' tables, which the helper must leave alone.
        try lab.addForeignTables(in: lab.router)
        let foreign = lab.foreignTables(in: lab.router)
        #expect(foreign.contains("table ip scrolloff") && foreign.contains("table inet othertool"), "\(foreign)")
        // Before the helper: the device gets the real answer from the outside resolver (the control).
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 853) == "connected")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 853, udp: true) == "connected")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 443, udp: true) == "connected")

        let (helper, _) = try lab.startHelper(
            in: lab.router, firewall: Self.routerSettings + "\n[metrics]\nlisten = \"127.0.0.1:9153\"")
        try lab.waitForTable(in: lab.router, present: true)
        // Another resolver, over UDP and TCP: answered by Scroll Off, so the blocked name is 0.0.0.0.
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == "0.0.0.0")
        #expect(try lab.dig(from: lab.device, server: "192.0.2.200", "instagram.com", tcp: true) == "0.0.0.0")
        // DNS over TLS: refused at once.
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 853) == "refused")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress, port: 853) == "refused")
        // HTTPS: refused to a listed DoH resolver, and let through to any other address.
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 443) == "refused")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress, port: 443) == "connected")
        // The same over UDP: DNS over QUIC (853) and HTTP/3 (443).
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 853, udp: true) == "refused")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 443, udp: true) == "refused")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress, port: 443, udp: true) == "connected")
        #expect(lab.foreignTables(in: lab.router) == foreign, "applying our table changed another")
        // A name of the DoH endpoint list, resolved through the upstream, joins the set.
        let deadline = Date().addingTimeInterval(15)
        while !lab.table(in: lab.router).contains("203.0.113.9"), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(try lab.connect(from: lab.device, to: "203.0.113.9", port: 443) == "refused")
        // block_encrypted_dns is on with the firewall: the device cannot look that name up either.
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "dns.google") == "0.0.0.0")
        // The router's own programs are covered too (its helper's upstream traffic is not: it answered above).
        let routerAnswer = try lab.dig(from: lab.router, server: FirewallLab.dohAddress, "instagram.com")
        #expect(routerAnswer == "0.0.0.0", "\(routerAnswer)\n\(lab.table(in: lab.router))")

        // Each attempt is counted: in the metrics and in doctor, which also sees the table in place.
        let metrics = try run("/usr/sbin/ip", ["netns", "exec", lab.router, "/usr/bin/curl", "-s", "http://127.0.0.1:9153/metrics"])
        let redirected = Self.value(of: "scrolloff_firewall_attempts_total{action=\"dns_redirected\"}", in: metrics)
        #expect((redirected ?? 0) >= 3, "\(metrics)")
        #expect((Self.value(of: "scrolloff_firewall_attempts_total{action=\"dot_refused\"}", in: metrics) ?? 0) >= 2)
        #expect((Self.value(of: "scrolloff_firewall_attempts_total{action=\"doh_refused\"}", in: metrics) ?? 0) >= 2)
        let doctor = try runWithStatus("/usr/sbin/ip", ["netns", "exec", lab.router, Products.scrolloff, "doctor", "--socket", helper.controlSocket])
        #expect(doctor.output.contains("table inet scrolloff in place (router)"), "\(doctor)")
        for none in ["; 0 DNS questions", ", 0 DNS-over-TLS", "and 0 DNS-over-HTTPS"] { #expect(!doctor.output.contains(none), "\(doctor)") }
        // And as events, once per device, server and port, in words.
        var events = ""
        let eventsDeadline = Date().addingTimeInterval(10)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            events = try helper.cli(["events"]).output
        } while !(events.contains("tried DNS over HTTPS") && events.contains("A program on this machine")) && Date() < eventsDeadline
        #expect(events.contains("A device (10.77.1.2) asked 8.8.8.8 for DNS directly; Scroll Off answered instead."), "\(events)")
        #expect(events.contains("A device (10.77.1.2) tried DNS over TLS to 8.8.8.8; the firewall refused it."), "\(events)")
        #expect(events.contains("A device (10.77.1.2) tried DNS over HTTPS to 8.8.8.8; the firewall refused it."), "\(events)")
        #expect(events.contains("A program on this machine asked 8.8.8.8 for DNS directly"), "\(events)")
        #expect(events.components(separatedBy: "asked 8.8.8.8 for DNS directly").count - 1 == 2, "one event per device, not per query: \(events)")
        // Per device: the attempt sets' element counters, read with the events (every 2 s).
        let perClient = try run("/usr/sbin/ip", ["netns", "exec", lab.router, "/usr/bin/curl", "-s", "http://127.0.0.1:9153/metrics"])
        #expect((Self.value(of: "scrolloff_firewall_client_attempts_total{client=\"10.77.1.2\",kind=\"dot\"}", in: perClient) ?? 0) >= 2, "\(perClient)")
        #expect((Self.value(of: "scrolloff_firewall_client_attempts_total{client=\"10.77.1.2\",kind=\"doh\"}", in: perClient) ?? 0) >= 2, "\(perClient)")
        #expect((Self.value(of: "scrolloff_firewall_client_attempts_total{client=\"10.77.1.2\",kind=\"dns\"}", in: perClient) ?? 0) >= 2, "\(perClient)")
        let byDevice = try runWithStatus("/usr/sbin/ip", ["netns", "exec", lab.router, Products.scrolloff, "doctor", "--socket", helper.controlSocket])
        #expect(byDevice.output.contains("most from 10.77.1.2 ("), "\(byDevice)")
        // Someone deletes the table by hand: doctor says so.
        try lab.inside(lab.router, "nft delete table inet scrolloff")
        let after = try runWithStatus("/usr/sbin/ip", ["netns", "exec", lab.router, Products.scrolloff, "doctor", "--socket", helper.controlSocket])
        #expect(after.output.contains("the table inet scrolloff is not in the kernel"), "\(after)")
        #expect(after.exitCode != 0)
        // Doctor's fix, a reload with the file unchanged, puts it back.
        helper.child.signal(SIGHUP)
        try lab.waitForTable(in: lab.router, present: true)
        let restored = try runWithStatus("/usr/sbin/ip", ["netns", "exec", lab.router, Products.scrolloff, "doctor", "--socket", helper.controlSocket])
        #expect(restored.output.contains("table inet scrolloff in place (router)"), "\(restored)")
        #expect(try lab.dig(from: lab.device, server: "192.0.2.200", "instagram.com") == "0.0.0.0")

        // Stopping the helper removes the table, and only it: the device reaches the outside again.
        helper.child.signal(SIGTERM)
        try lab.waitForTable(in: lab.router, present: false)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
        #expect(lab.foreignTables(in: lab.router) == foreign, "removing our table changed another")
    }

    /// IPv6 as well as IPv4, from a device with both: another resolver, DoT and DoH by address are
    /// closed over IPv6 too. The helper listens for the LAN on `[::]:53` alone, a dual-stack socket
    /// (the kernel's default), so the device's IPv4 DNS is redirected there as well, not refused.
    /// Under the unit's capabilities, as systemd runs it on a gateway.
    @Test func a_device_cannot_bypass_over_ipv6_and_a_dual_stack_listener_serves_both_families() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress6, "instagram.com") == FirewallLab.realAddress)
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress6, port: 853) == "connected")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress6, port: 443, udp: true) == "connected")

        let (helper, _) = try lab.startHelper(
            in: lab.router, firewall: Self.routerSettings + "\n[metrics]\nlisten = \"127.0.0.1:9153\"", mode: .unitCapabilities,
            listen: ["[::1]:0"], lanListen: "[::]:53")
        try lab.waitForTable(in: lab.router, present: true)
        let table = lab.table(in: lab.router)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress6, "instagram.com") == "0.0.0.0", "\(table)")
        #expect(try lab.dig(from: lab.device, server: FirewallLab.otherAddress6, "instagram.com", tcp: true) == "0.0.0.0", "\(table)")
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == "0.0.0.0", "\(table)")
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com", tcp: true) == "0.0.0.0", "\(table)")
        for udp in [false, true] {
            #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress6, port: 853, udp: udp) == "refused", "udp \(udp)")
            #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress6, port: 853, udp: udp) == "refused", "udp \(udp)")
            #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress6, port: 443, udp: udp) == "refused", "udp \(udp)")
            #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress6, port: 443, udp: udp) == "connected", "udp \(udp)")
        }
        // The router's own programs over IPv6 go to its ::1 listener.
        #expect(try lab.dig(from: lab.router, server: FirewallLab.dohAddress6, "instagram.com") == "0.0.0.0")

        // Counted per device under its IPv6 address, and as events in words.
        let series = ["dns", "dot", "doh"].map { "scrolloff_firewall_client_attempts_total{client=\"\(FirewallLab.device6)\",kind=\"\($0)\"}" }
        var metrics = ""
        let deadline = Date().addingTimeInterval(10)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            metrics = try run("/usr/sbin/ip", ["netns", "exec", lab.router, "/usr/bin/curl", "-s", "http://127.0.0.1:9153/metrics"])
        // Until every count has reached 2, not only appeared: the firewall's log lines reach the
        // helper one by one, and a scrape between two of them read doh = 1 once (a clean run).
        } while series.contains(where: { (Self.value(of: $0, in: metrics) ?? 0) < 2 }) && Date() < deadline
        for name in series { #expect((Self.value(of: name, in: metrics) ?? 0) >= 2, "\(name)\n\(metrics)") }
        let sentences = [
            "A device (fd77:1::2) asked 2001:4860:4860::8888 for DNS directly; Scroll Off answered instead.",
            "A device (fd77:1::2) tried DNS over TLS to 2001:4860:4860::8888; the firewall refused it.",
            "A device (fd77:1::2) tried DNS over HTTPS to 2001:4860:4860::8888; the firewall refused it.",
        ]
        let events = try Self.events(of: helper, containing: sentences)
        for sentence in sentences { #expect(events.contains(sentence), "\(events)") }
        helper.child.signal(SIGTERM)
        try lab.waitForTable(in: lab.router, present: false)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress6, "instagram.com") == FirewallLab.realAddress)
    }

    /// `scrolloff events` once it holds every one of `sentences`, or after 10 s (the attempt sets
    /// are read every 2 s).
    static func events(of helper: Sinkhole, containing sentences: [String]) throws -> String {
        var events = ""
        let deadline = Date().addingTimeInterval(10)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            events = try helper.cli(["events"]).output
        } while sentences.contains(where: { !events.contains($0) }) && Date() < deadline
        return events
    }

    /// A sample's value in Prometheus text: `NAME{labels} VALUE`.
    static func value(of series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// Attempts to one address and port are one element of the attempt set, read every 2 s: the
    /// helper counts what the element gained since its last read, so attempts spread over several
    /// reads are each counted once, none lost between a read and a delete, none counted twice.
    @Test func attempts_to_one_server_spread_over_several_reads_are_each_counted_once() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        let (helper, _) = try lab.startHelper(
            in: lab.router, firewall: Self.routerSettings + "\n[metrics]\nlisten = \"127.0.0.1:9153\"", mode: .root,
            listen: ["[::1]:0"], lanListen: "[::]:53")
        try lab.waitForTable(in: lab.router, present: true)
        let attempts = 6
        for attempt in 0..<attempts {
            // Alternately over UDP (QUIC) and TCP: both land in the one element for port 443.
            #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress6, port: 443, udp: attempt % 2 == 0) == "refused")
            Thread.sleep(forTimeInterval: 0.9)
        }
        let series = "scrolloff_firewall_client_attempts_total{client=\"\(FirewallLab.device6)\",kind=\"doh\"}"
        var metrics = ""
        let deadline = Date().addingTimeInterval(10)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            metrics = try run("/usr/sbin/ip", ["netns", "exec", lab.router, "/usr/bin/curl", "-s", "http://127.0.0.1:9153/metrics"])
        } while (Self.value(of: series, in: metrics) ?? 0) < Double(attempts) && Date() < deadline
        // Two more reads, so a count that would go on growing (an element counted twice) shows.
        Thread.sleep(forTimeInterval: 4.5)
        metrics = try run("/usr/sbin/ip", ["netns", "exec", lab.router, "/usr/bin/curl", "-s", "http://127.0.0.1:9153/metrics"])
        #expect(Self.value(of: series, in: metrics) == Double(attempts), "\(series)\n\(metrics)")
        helper.child.signal(SIGTERM)
        try lab.waitForTable(in: lab.router, present: false)
    }

    @Test func a_reload_that_turns_the_firewall_off_removes_the_table_and_on_again_restores_it() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        let (helper, config) = try lab.startHelper(in: lab.router, firewall: Self.routerSettings)
        try lab.waitForTable(in: lab.router, present: true)
        try Data("[firewall]\nenabled = false\n".utf8).write(to: URL(fileURLWithPath: config))
        helper.child.signal(SIGHUP)
        try lab.waitForTable(in: lab.router, present: false)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
        try Data(("[firewall]\n" + Self.routerSettings + "\n").utf8).write(to: URL(fileURLWithPath: config))
        helper.child.signal(SIGHUP)
        try lab.waitForTable(in: lab.router, present: true)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == "0.0.0.0")
        #expect(helper.child.isRunning)
    }

    /// SPEC §9b: the DoH endpoint names are resolved again with the lists' refresh, so a provider
    /// that moves to a new address is refused there too, without a restart: after
    /// `scrolloff lists update` (the refresh a person starts; the timer's runs the same signal)
    /// and after a reload with the file unchanged. As root and under the unit's capabilities.
    @Test(arguments: [PrivilegeMode.root, .unitCapabilities])
    func a_doh_provider_that_moves_is_refused_at_its_new_address_after_a_list_refresh_and_a_reload(_ mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        let (helper, _) = try lab.startHelper(in: lab.router, firewall: Self.routerSettings, mode: mode)
        try lab.waitForTable(in: lab.router, present: true)
        let (first, moved, movedAgain) = (FirewallLab.dohNameAddresses[0], FirewallLab.dohNameAddresses[1], FirewallLab.dohNameAddresses[2])
        try Self.waitUntil(lab.table(in: lab.router).contains(first))
        #expect(try lab.connect(from: lab.device, to: first, port: 443) == "refused")
        let resolvedLines = { helper.child.stderr.components(separatedBy: "addresses of DNS-over-HTTPS endpoints resolved").count - 1 }
        let before = resolvedLines()
        #expect(before >= 1, "\(helper.child.stderr)")

        // The provider moves: the new address passes until the names are resolved again.
        try lab.moveDoHName(to: moved)
        #expect(try lab.connect(from: lab.device, to: moved, port: 443) == "connected")
        let update = try helper.cli(["lists", "update"])
        #expect(update.exitCode == 0, "\(update)")
        try Self.waitUntil(lab.table(in: lab.router).contains(moved))
        #expect(try lab.connect(from: lab.device, to: moved, port: 443) == "refused", "\(lab.table(in: lab.router))")
        #expect(resolvedLines() > before, "\(helper.child.stderr)")
        // An address no list names still passes.
        #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress, port: 443) == "connected")

        // A reload with the file unchanged resolves them again as well.
        try lab.moveDoHName(to: movedAgain)
        helper.child.signal(SIGHUP)
        try Self.waitUntil(lab.table(in: lab.router).contains(movedAgain))
        #expect(try lab.connect(from: lab.device, to: movedAgain, port: 443) == "refused", "\(lab.table(in: lab.router))")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress, port: 443) == "connected")
        #expect(helper.child.isRunning)
    }

    /// Polls `condition` every 0.1 s for at most `seconds`; the caller's expectation says what failed.
    static func waitUntil(_ condition: @autoclosure () throws -> Bool, seconds: Double = 5) rethrows {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition(), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
    }

    /// SPEC §9b: a helper that dies leaves the table, so DNS fails closed (no answer at all, not the
    /// real one) until systemd starts it again, which puts the table back and answers again.
    @Test func when_the_helper_dies_dns_fails_closed_until_it_is_back() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        let (helper, _) = try lab.startHelper(in: lab.router, firewall: Self.routerSettings)
        try lab.waitForTable(in: lab.router, present: true)
        helper.child.signal(SIGKILL)
        while helper.child.isRunning { Thread.sleep(forTimeInterval: 0.02) }
        #expect(lab.tableExists(in: lab.router))
        let answer = try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com")
        #expect(!answer.contains(FirewallLab.realAddress), "\(answer)")
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 443) == "refused")
        // As systemd's Restart=on-failure does: a new helper takes its table over.
        let (again, _) = try lab.startHelper(in: lab.router, firewall: Self.routerSettings)
        try lab.waitForTable(in: lab.router, present: true)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == "0.0.0.0")
        again.child.signal(SIGTERM)
        try lab.waitForTable(in: lab.router, present: false)
    }

    /// Whether dig got no answer from the listed resolver: refused (a TCP reset or ICMP port
    /// unreachable), or no reply at all when the kernel's ICMP rate limit (a burst of 6 a second per
    /// peer, icmp_ratelimit) swallowed the error of one of many refused datagrams in a row.
    static func closed(_ answer: String) -> Bool {
        !answer.contains(FirewallLab.realAddress) && (answer.contains("refused") || answer.contains("timed out"))
    }

    /// SPEC §9b: `dig -p 5353 @208.67.222.222 instagram.com` from a LAN device got the real answer,
    /// also while the helper was dead. Now every TCP and UDP port of a listed resolver's address is
    /// closed to the device, IPv4 and IPv6, while the helper runs and after a kill -9; port 53 is
    /// answered by the sinkhole while it runs. The helper's own upstream is that very resolver on
    /// 5353 and still answers it (its sockets carry the mark). A stop that was asked for removes
    /// the table and gives the network its DNS back, every port included (docs/firewall.md).
    @Test func a_device_cannot_reach_a_listed_resolver_on_any_port_while_the_helper_runs_or_after_it_was_killed() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        try lab.startListedResolver()
        let servers = [FirewallLab.listedResolver, FirewallLab.listedResolver6]
        // The control: before the helper, every port answers the device with the real address.
        for server in servers {
            for port in FirewallLab.listedResolverPorts {
                for tcp in [false, true] {
                    let answer = try lab.dig(from: lab.device, server: server, "instagram.com", tcp: tcp, port: port)
                    #expect(answer == FirewallLab.realAddress, "before: \(server) port \(port) tcp \(tcp): \(answer)")
                }
            }
        }
        let settings = Self.routerSettings + "\n[metrics]\nlisten = \"127.0.0.1:9153\""
        let (helper, _) = try lab.startHelper(in: lab.router, firewall: settings, listen: ["[::1]:0"], lanListen: "[::]:53",
                                              upstream: "\(FirewallLab.listedResolver):5353")
        try lab.waitForTable(in: lab.router, present: true)
        /// Every port of both addresses over UDP and TCP; port 53 is the sinkhole's while it runs.
        func expectClosed(_ phase: String, helperRuns: Bool) throws {
            for server in servers {
                for port in FirewallLab.listedResolverPorts {
                    for tcp in [false, true] {
                        let answer = try lab.dig(from: lab.device, server: server, "instagram.com", tcp: tcp, port: port)
                        if port == 53 && helperRuns {
                            #expect(answer == "0.0.0.0", "\(phase): \(server) port \(port) tcp \(tcp): \(answer)")
                        } else {
                            #expect(Self.closed(answer), "\(phase): \(server) port \(port) tcp \(tcp): \(answer)\n\(lab.table(in: lab.router))")
                        }
                    }
                }
            }
        }
        try expectClosed("helper running", helperRuns: true)
        // The helper's upstream is the listed resolver on 5353: an allowed name still resolves.
        #expect(try lab.dig(from: lab.device, server: FirewallLab.listedResolver, "ready.test") == "10.0.0.1")
        #expect(try lab.dig(from: lab.device, server: FirewallLab.listedResolver6, "ready.test", tcp: true) == "10.0.0.1")
        // Ordinary HTTPS elsewhere stays open.
        #expect(try lab.connect(from: lab.device, to: FirewallLab.otherAddress, port: 443) == "connected")
        // Counted as its own kind, and an event in words.
        let series = "scrolloff_firewall_client_attempts_total{client=\"10.77.1.2\",kind=\"resolver\"}"
        var metrics = ""
        let deadline = Date().addingTimeInterval(10)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            metrics = try run("/usr/sbin/ip", ["netns", "exec", lab.router, "/usr/bin/curl", "-s", "http://127.0.0.1:9153/metrics"])
        } while (Self.value(of: series, in: metrics) ?? 0) < 4 && Date() < deadline
        #expect((Self.value(of: series, in: metrics) ?? 0) >= 4, "\(metrics)")
        // 5353, 784 and 8853 over UDP and TCP to both addresses (443 is doh_refused, 853 dot_refused).
        #expect((Self.value(of: "scrolloff_firewall_attempts_total{action=\"resolver_refused\"}", in: metrics) ?? 0) >= 12, "\(metrics)")
        let sentence = "A device (10.77.1.2) tried the DNS resolver 208.67.222.222 on port 5353; the firewall refused it."
        #expect(try Self.events(of: helper, containing: [sentence]).contains(sentence))

        // Killed: the table stays, and so does every refusal; port 53 finds no sinkhole: refused too.
        helper.child.signal(SIGKILL)
        while helper.child.isRunning { Thread.sleep(forTimeInterval: 0.02) }
        #expect(lab.tableExists(in: lab.router))
        try expectClosed("helper killed", helperRuns: false)

        // As systemd's Restart=on-failure: a new helper takes the table over; then a stop.
        let (again, _) = try lab.startHelper(in: lab.router, firewall: Self.routerSettings, listen: ["[::1]:0"], lanListen: "[::]:53",
                                             upstream: "\(FirewallLab.listedResolver):5353")
        try lab.waitForTable(in: lab.router, present: true)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.listedResolver, "instagram.com", port: 5353).contains("refused"))
        again.child.signal(SIGTERM)
        try lab.waitForTable(in: lab.router, present: false)
        for server in servers {
            for port in [53, 5353] {
                #expect(try lab.dig(from: lab.device, server: server, "instagram.com", port: port) == FirewallLab.realAddress,
                        "after a stop: \(server) port \(port)")
            }
        }
    }

    /// Workstation: a person without root (uid 65534) tries the listed resolver's other ports from
    /// this machine, over both families, while the helper (under the unit's capabilities) forwards
    /// to that same resolver on 5353 through its marked sockets.
    @Test func a_program_of_an_ordinary_user_cannot_reach_a_listed_resolver_on_any_port_but_the_helper_can() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: false)
        let ws = lab.workstation
        try lab.startListedResolver()
        let user = PrivilegeMode.ordinaryUID
        #expect(try lab.dig(from: ws, server: FirewallLab.listedResolver, "instagram.com", port: 5353, as: user) == FirewallLab.realAddress)
        let (helper, _) = try lab.startHelper(in: ws, firewall: "enabled = true", mode: .unitCapabilities, listen: ["[::1]:0"],
                                              upstream: "\(FirewallLab.listedResolver):5353")
        do { try lab.waitForTable(in: ws, present: true) } catch {
            Issue.record("\(error)\n\(helper.child.stderr)")
            return
        }
        for server in [FirewallLab.listedResolver, FirewallLab.listedResolver6] {
            for port in FirewallLab.listedResolverPorts where port != 53 {
                for tcp in [false, true] {
                    let answer = try lab.dig(from: ws, server: server, "instagram.com", tcp: tcp, port: port, as: user)
                    #expect(Self.closed(answer), "\(server) port \(port) tcp \(tcp): \(answer)\n\(lab.table(in: ws))")
                }
            }
            #expect(try lab.dig(from: ws, server: server, "instagram.com", as: user) == "0.0.0.0", "\(server)")
            // Forwarded by the helper to the listed resolver on 5353.
            #expect(try lab.dig(from: ws, server: server, "ready.test", as: user) == "10.0.0.1", "\(server)")
        }
    }

    /// Workstation mode: the helper and the programs trying to bypass it in one namespace; as root
    /// and under the unit's capabilities (CAP_NET_ADMIN for nft and the upstream sockets' mark).
    @Test(arguments: [PrivilegeMode.root, .unitCapabilities])
    func a_local_program_cannot_bypass_the_sinkhole_on_a_workstation(_ mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: false)
        let ws = lab.workstation
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress6, "instagram.com") == FirewallLab.realAddress)
        // Listening on ::1 as well (the sample's default), so IPv6 DNS has a loopback listener to go to.
        let (helper, _) = try lab.startHelper(in: ws, firewall: "enabled = true\n[metrics]\nlisten = \"127.0.0.1:9153\"", mode: mode,
                                              listen: ["[::1]:0"])
        try lab.waitForTable(in: ws, present: true)
        for server in [FirewallLab.dohAddress, FirewallLab.dohAddress6] {
            #expect(try lab.dig(from: ws, server: server, "instagram.com") == "0.0.0.0", "\(server)")
            #expect(try lab.dig(from: ws, server: server, "instagram.com", tcp: true) == "0.0.0.0", "\(server)")
            // An allowed name still resolves: the helper's own (marked) upstream queries go out.
            #expect(try lab.dig(from: ws, server: server, "ready.test") == "10.0.0.1", "\(server)")
        }
        for udp in [false, true] {
            for (listed, other) in [(FirewallLab.dohAddress, FirewallLab.otherAddress), (FirewallLab.dohAddress6, FirewallLab.otherAddress6)] {
                #expect(try lab.connect(from: ws, to: listed, port: 853, udp: udp) == "refused", "\(listed) udp \(udp)")
                #expect(try lab.connect(from: ws, to: listed, port: 443, udp: udp) == "refused", "\(listed) udp \(udp)")
                #expect(try lab.connect(from: ws, to: other, port: 443, udp: udp) == "connected", "\(other) udp \(udp)")
            }
        }
        // Each counted: in the metrics, and as events that name a program on this machine.
        let sentences = [FirewallLab.dohAddress, FirewallLab.dohAddress6].flatMap { server in [
            "A program on this machine asked \(server) for DNS directly; Scroll Off answered instead.",
            "A program on this machine tried DNS over TLS to \(server); the firewall refused it.",
            "A program on this machine tried DNS over HTTPS to \(server); the firewall refused it.",
        ] }
        let events = try Self.events(of: helper, containing: sentences)
        for sentence in sentences { #expect(events.contains(sentence), "\(events)") }
        let metrics = try run("/usr/sbin/ip", ["netns", "exec", ws, "/usr/bin/curl", "-s", "http://127.0.0.1:9153/metrics"])
        #expect((Self.value(of: "scrolloff_firewall_attempts_total{action=\"dns_redirected\"}", in: metrics) ?? 0) >= 6, "\(metrics)")
        #expect((Self.value(of: "scrolloff_firewall_attempts_total{action=\"dot_refused\"}", in: metrics) ?? 0) >= 4, "\(metrics)")
        #expect((Self.value(of: "scrolloff_firewall_attempts_total{action=\"doh_refused\"}", in: metrics) ?? 0) >= 4, "\(metrics)")
        let doctor = try runWithStatus("/usr/sbin/ip", ["netns", "exec", ws, Products.scrolloff, "doctor", "--socket", helper.controlSocket])
        #expect(doctor.output.contains("table inet scrolloff in place (workstation)"), "\(doctor)")
        for none in ["; 0 DNS questions", ", 0 DNS-over-TLS", "and 0 DNS-over-HTTPS"] { #expect(!doctor.output.contains(none), "\(doctor)") }
        helper.child.signal(SIGTERM)
        try lab.waitForTable(in: ws, present: false)
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress6, "instagram.com") == FirewallLab.realAddress)
    }

    /// `make uninstall` takes away a table that a killed helper left behind (SPEC §9b: it stays, so
    /// DNS fails closed), and no other table. Run as root on the machine (no DESTDIR) with every
    /// location in the scratch folder, inside the lab's namespace: `ip netns exec` gives a mount
    /// namespace of its own, where an empty /run/systemd keeps systemctl away from the host's systemd.
    @Test func make_uninstall_removes_the_table_a_killed_helper_left_and_no_other() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: false)
        let ws = lab.workstation
        try lab.addForeignTables(in: ws)
        let foreign = lab.foreignTables(in: ws)
        let (helper, _) = try lab.startHelper(in: ws, firewall: "enabled = true", blocklist: [])
        try lab.waitForTable(in: ws, present: true)
        helper.child.signal(SIGKILL)
        while helper.child.isRunning { Thread.sleep(forTimeInterval: 0.02) }
        #expect(lab.tableExists(in: ws))
        let root = scratch.path + "/machine"
        let script = """
            export PATH=/usr/sbin:/usr/bin:/sbin:/bin
            if [ -d /run/systemd ]; then mount -t tmpfs none /run/systemd || exit 9; fi
            exec make -s -C \(InstallEndToEndTests.sourceRoot) uninstall DESTDIR= PREFIX=\(root)/usr SYSCONFDIR=\(root)/etc \
                STATEDIR=\(root)/var/lib/scrolloff UNITDIR=\(root)/units
            """
        let outcome = try runWithStatus("/usr/sbin/ip", ["netns", "exec", ws, "/bin/sh", "-c", script])
        #expect(outcome.exitCode == 0, "\(outcome)")
        #expect(!lab.tableExists(in: ws), "\(lab.table(in: ws))")
        #expect(lab.foreignTables(in: ws) == foreign)
    }

    /// Without CAP_NET_ADMIN the table cannot be applied: the helper says so and stops, rather than
    /// run claiming a protection it does not give.
    @Test func an_ordinary_user_cannot_turn_the_firewall_on_and_is_told_why() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: false)
        let (helper, _) = try lab.startHelper(in: lab.workstation, firewall: "enabled = true", mode: .ordinaryUser, blocklist: [])
        let deadline = Date().addingTimeInterval(10)
        while helper.child.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!helper.child.isRunning)
        #expect(helper.child.stderr.contains("CAP_NET_ADMIN"), "\(helper.child.stderr)")
        #expect(!lab.tableExists(in: lab.workstation))
    }

    /// A reload that turns the firewall on where nft cannot apply it is refused whole: the helper
    /// goes on answering with the configuration it had, and the log says why.
    @Test func a_reload_the_kernel_refuses_keeps_the_previous_configuration() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: false)
        let (helper, config) = try lab.startHelper(in: lab.workstation, firewall: "enabled = false", mode: .ordinaryUser, blocklist: [])
        try Data("[firewall]\nenabled = true\n".utf8).write(to: URL(fileURLWithPath: config))
        helper.child.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while !helper.child.stderr.contains("configuration not reloaded"), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(helper.child.stderr.contains("configuration not reloaded"), "\(helper.child.stderr)")
        #expect(helper.child.stderr.contains("nft refused the scrolloff table"), "\(helper.child.stderr)")
        #expect(helper.child.isRunning)
        #expect(!lab.tableExists(in: lab.workstation))
        // Still forwarding, so its upstream sockets were not given a mark it may not set.
        let answer = try run("/usr/sbin/ip", ["netns", "exec", lab.workstation, "/usr/bin/dig", "@127.0.0.1", "-p", "\(helper.port)",
                                              "+short", "+time=2", "+tries=1", "ready.test"])
        #expect(answer.trimmingCharacters(in: .whitespacesAndNewlines) == "10.0.0.1", "\(answer)")
    }
}
