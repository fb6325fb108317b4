import Foundation
import Testing

/// The three network bypasses of issue 14 tried as a motivated user would, against the real helper
/// and its real nftables table, in namespaces of our own (`FirewallLab`): asking another resolver,
/// DNS over TLS, and DNS over HTTPS to a resolver's address. Each is closed while the helper runs.
@Suite("Firewall: the bypasses are closed (issue 14)", .serialized)
struct FirewallEndToEndTests {
    static let routerSettings = "enabled = true\nmode = \"router\"\nlan_interfaces = [\"lan0\"]"

    @Test func a_device_behind_the_router_cannot_bypass_the_sinkhole() throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: true)
        // Before the helper: the device gets the real answer from the outside resolver (the control).
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
        #expect(try lab.connect(from: lab.device, to: FirewallLab.dohAddress, port: 853) == "connected")

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
        // A name of the DoH endpoint list, resolved through the upstream, joins the set.
        let deadline = Date().addingTimeInterval(15)
        while !lab.table(in: lab.router).contains("203.0.113.9"), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(try lab.connect(from: lab.device, to: "203.0.113.9", port: 443) == "refused")
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

        // Stopping the helper removes the table, and only it: the device reaches the outside again.
        helper.child.signal(SIGTERM)
        try lab.waitForTable(in: lab.router, present: false)
        #expect(try lab.dig(from: lab.device, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
    }

    /// A sample's value in Prometheus text: `NAME{labels} VALUE`.
    static func value(of series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
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

    /// Workstation mode: the helper and the programs trying to bypass it in one namespace; as root
    /// and under the unit's capabilities (CAP_NET_ADMIN for nft and the upstream sockets' mark).
    @Test(arguments: [PrivilegeMode.root, .unitCapabilities])
    func a_local_program_cannot_bypass_the_sinkhole_on_a_workstation(_ mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let lab = try FirewallLab(scratch: scratch, routed: false)
        let ws = lab.workstation
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
        let (helper, _) = try lab.startHelper(in: ws, firewall: "enabled = true", mode: mode)
        try lab.waitForTable(in: ws, present: true)
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress, "instagram.com") == "0.0.0.0")
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress, "instagram.com", tcp: true) == "0.0.0.0")
        // An allowed name still resolves: the helper's own (marked) upstream queries go out.
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress, "ready.test") == "10.0.0.1")
        #expect(try lab.connect(from: ws, to: FirewallLab.dohAddress, port: 853) == "refused")
        #expect(try lab.connect(from: ws, to: FirewallLab.dohAddress, port: 443) == "refused")
        #expect(try lab.connect(from: ws, to: FirewallLab.otherAddress, port: 443) == "connected")
        helper.child.signal(SIGTERM)
        try lab.waitForTable(in: ws, present: false)
        #expect(try lab.dig(from: ws, server: FirewallLab.dohAddress, "instagram.com") == FirewallLab.realAddress)
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
