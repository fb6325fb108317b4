import Foundation
import TestSupport
import Testing

/// Network namespaces of our own for the firewall tests (SPEC §9b): never the host's tables.
///
/// - `out` plays the Internet: a fake outside resolver (dnsmasq) on 8.8.8.8, 2001:4860:4860::8888
///   and 10.77.2.2 (the helper's upstream) that gives instagram.com its "real" address, and TCP
///   and UDP listeners (a greeting, an echo) on ports 443 and 853 of 8.8.8.8 and
///   2001:4860:4860::8888 (listed DoH resolvers) and 203.0.113.7 and 2001:db8::7 (ordinary web
///   servers).
/// - Router lab: `dev` (a device, 10.77.1.2 and fd77:1::2, default routes via the router) — veth —
///   `rtr` (the gateway running the helper, LAN interface `lan0` 10.77.1.1 and fd77:1::1, WAN
///   10.77.2.1 and fd77:2::1, forwarding on for both families) — veth — `out` (10.77.2.2, fd77:2::2).
/// - Workstation lab: `ws` (10.77.2.1, fd77:2::1) — veth — `out`: the helper and the programs that
///   try to bypass it share the one namespace `ws` (`ip netns exec`).
///
/// IPv6 addresses are added with `nodad`: a tentative address (duplicate address detection takes
/// a second or two) is one the kernel will neither answer from nor redirect to.
///
/// Everything goes at deinit, failed test or not: the processes it started (by their own pid), then
/// the namespaces (which takes their veths and nftables tables with them).
final class FirewallLab: @unchecked Sendable {
    static let realAddress = "10.20.30.40"
    static let dohAddress = "8.8.8.8"
    static let otherAddress = "203.0.113.7"
    static let upstream = "10.77.2.2"
    static let dohAddress6 = "2001:4860:4860::8888"
    static let otherAddress6 = "2001:db8::7"
    static let device6 = "fd77:1::2"
    /// Where dns.google (on the DoH endpoint list) points at the fake outside resolver: the first
    /// at start, the others after `moveDoHName`. Each has the listeners on 443 and 853.
    static let dohNameAddresses = ["203.0.113.9", "203.0.113.10", "203.0.113.11"]

    let scratch: Scratch
    let prefix = "so" + UUID().uuidString.prefix(6).lowercased()
    private(set) var namespaces: [String] = []
    private var children: [Child] = []
    private var dnsmasq: Child?
    private var dohHosts: String { "\(scratch.path)/doh-\(prefix).hosts" }

    // "firewall" in the namespaces' names, so who made them is plain beside other tests' namespaces.
    var device: String { "firewall-\(prefix)-dev" }
    var router: String { "firewall-\(prefix)-rtr" }
    var outside: String { "firewall-\(prefix)-out" }
    var workstation: String { "firewall-\(prefix)-ws" }

    /// - Parameter routed: the router lab (three namespaces); otherwise the workstation lab.
    init(scratch: Scratch, routed: Bool) throws {
        self.scratch = scratch
        do {
            if routed { try buildRouterLab() } else { try buildWorkstationLab() }
        } catch {
            tearDown()
            throw error
        }
    }

    private func buildRouterLab() throws {
        for name in [device, router, outside] { try addNamespace(name) }
        try sh("ip link add \(prefix)a type veth peer name \(prefix)b",
               "ip link set \(prefix)a netns \(device)", "ip link set \(prefix)b netns \(router)",
               "ip link add \(prefix)c type veth peer name \(prefix)d",
               "ip link set \(prefix)c netns \(router)", "ip link set \(prefix)d netns \(outside)")
        try inside(device, "ip link set lo up", "ip link set \(prefix)a name eth0", "ip addr add 10.77.1.2/24 dev eth0",
                   "ip -6 addr add \(Self.device6)/64 dev eth0 nodad",
                   "ip link set eth0 up", "ip route add default via 10.77.1.1", "ip -6 route add default via fd77:1::1")
        try inside(router, "ip link set lo up", "ip link set \(prefix)b name lan0", "ip link set \(prefix)c name wan0",
                   "ip addr add 10.77.1.1/24 dev lan0", "ip addr add 10.77.2.1/24 dev wan0",
                   "ip -6 addr add fd77:1::1/64 dev lan0 nodad", "ip -6 addr add fd77:2::1/64 dev wan0 nodad", "ip link set lan0 up",
                   "ip link set wan0 up", "ip route add default via 10.77.2.2", "ip -6 route add default via fd77:2::2",
                   "sysctl -qw net.ipv4.ip_forward=1", "sysctl -qw net.ipv6.conf.all.forwarding=1")
        try inside(outside, "ip link set lo up", "ip link set \(prefix)d name eth0", "ip addr add 10.77.2.2/24 dev eth0",
                   "ip -6 addr add fd77:2::2/64 dev eth0 nodad",
                   "ip link set eth0 up", "ip route add 10.77.1.0/24 via 10.77.2.1", "ip -6 route add fd77:1::/64 via fd77:2::1",
                   "ip addr add \(Self.dohAddress)/32 dev lo", "ip addr add \(Self.otherAddress)/32 dev lo",
                   "ip -6 addr add \(Self.dohAddress6)/128 dev lo", "ip -6 addr add \(Self.otherAddress6)/128 dev lo")
        try startOutsideServers(in: outside)
        try waitForIPv6Path(from: device)
    }

    /// The workstation and the outside, one veth apart: the resolvers must not be the machine's own
    /// addresses, since questions to those are no bypass and the table leaves them alone.
    private func buildWorkstationLab() throws {
        for name in [workstation, outside] { try addNamespace(name) }
        try sh("ip link add \(prefix)a type veth peer name \(prefix)b",
               "ip link set \(prefix)a netns \(workstation)", "ip link set \(prefix)b netns \(outside)")
        try inside(workstation, "ip link set lo up", "ip link set \(prefix)a name eth0", "ip addr add 10.77.2.1/24 dev eth0",
                   "ip -6 addr add fd77:2::1/64 dev eth0 nodad",
                   "ip link set eth0 up", "ip route add default via 10.77.2.2", "ip -6 route add default via fd77:2::2")
        try inside(outside, "ip link set lo up", "ip link set \(prefix)b name eth0", "ip addr add 10.77.2.2/24 dev eth0",
                   "ip -6 addr add fd77:2::2/64 dev eth0 nodad",
                   "ip link set eth0 up", "ip addr add \(Self.dohAddress)/32 dev lo", "ip addr add \(Self.otherAddress)/32 dev lo",
                   "ip -6 addr add \(Self.dohAddress6)/128 dev lo", "ip -6 addr add \(Self.otherAddress6)/128 dev lo")
        try startOutsideServers(in: outside)
        try waitForIPv6Path(from: workstation)
    }

    /// Until the outside resolver answers over IPv6 from `namespace`. The first IPv6 datagram on a
    /// fresh path is lost now and then while neighbour discovery settles (seen with kernel 6.18);
    /// the tests' own first question must not be that one.
    private func waitForIPv6Path(from namespace: String) throws {
        for _ in 0..<10 {
            if try run("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/dig", "@\(Self.dohAddress6)", "+short", "+time=1", "+tries=1", "ready.test"])
                .contains("10.0.0.1") { return }
        }
        throw HarnessError("the fake outside resolver does not answer over IPv6 from \(namespace)")
    }

    /// Moves dns.google to `address` (one of `dohNameAddresses`) at the fake outside resolver:
    /// a DoH provider's address changing while the helper runs.
    func moveDoHName(to address: String) throws {
        try Data("\(address) dns.google\n".utf8).write(to: URL(fileURLWithPath: dohHosts))
        dnsmasq?.signal(SIGHUP)
        for _ in 0..<50 {
            if try run("/usr/sbin/ip", ["netns", "exec", outside, "/usr/bin/dig", "@\(Self.upstream)", "+short", "+time=1", "+tries=1", "dns.google"])
                .trimmingCharacters(in: .whitespacesAndNewlines) == address { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw HarnessError("the fake outside resolver does not answer \(address) for dns.google")
    }

    /// The fake outside resolver and the TCP and UDP listeners on 443 and 853.
    private func startOutsideServers(in namespace: String) throws {
        try Data("\(Self.dohNameAddresses[0]) dns.google\n".utf8).write(to: URL(fileURLWithPath: dohHosts))
        let dnsmasq = try Child("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/sbin/dnsmasq", "--no-daemon", "--conf-file=/dev/null",
            "--port=53", "--listen-address=\(Self.upstream),\(Self.dohAddress),\(Self.dohAddress6)", "--bind-interfaces", "--no-resolv", "--no-hosts",
            "--pid-file=", "--host-record=instagram.com,\(Self.realAddress)", "--host-record=ready.test,10.0.0.1",
            // A name of the DoH endpoint list: the helper resolves it and refuses HTTPS to its
            // address. From a hosts file, which dnsmasq reads again at SIGHUP (`moveDoHName`).
            "--addn-hosts=\(dohHosts)"],
            scratch: scratch, label: "\(namespace)-dnsmasq")
        children.append(dnsmasq)
        self.dnsmasq = dnsmasq
        let script = try scratch.file("listeners.py", """
            import socket, threading, sys
            def family(address):
                return socket.AF_INET6 if ":" in address else socket.AF_INET
            def serve(address, port):
                s = socket.socket(family(address)); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((address, port)); s.listen(16)
                while True:
                    c, _ = s.accept(); c.sendall(b"hello\\n"); c.close()
            def echo(address, port):
                s = socket.socket(family(address), socket.SOCK_DGRAM); s.bind((address, port))
                while True:
                    _, peer = s.recvfrom(512); s.sendto(b"hello\\n", peer)
            for address in ["\(Self.dohAddress)", "\(Self.otherAddress)", "\(Self.dohAddress6)", "\(Self.otherAddress6)", \(Self.dohNameAddresses.map { "\"\($0)\"" }.joined(separator: ", "))]:
                for port in [443, 853]:
                    threading.Thread(target=serve, args=(address, port), daemon=True).start()
                    threading.Thread(target=echo, args=(address, port), daemon=True).start()
            print("listening", flush=True)
            threading.Event().wait()
            """)
        for address in Self.dohNameAddresses { try inside(namespace, "ip addr add \(address)/32 dev lo") }
        let listeners = try Child("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/python3", script],
                                  scratch: scratch, label: "\(namespace)-listeners")
        children.append(listeners)
        _ = try listeners.waitForLine { $0 == "listening" }
        for _ in 0..<100 {
            if try run("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/dig", "@\(Self.upstream)", "+short", "+time=1", "+tries=1", "ready.test"])
                .contains("10.0.0.1") { return }
            guard dnsmasq.isRunning else { throw HarnessError("dnsmasq exited: \(dnsmasq.stderr)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw HarnessError("the fake outside resolver does not answer")
    }

    /// A listed resolver (OpenDNS, on the shipped `resolver-addresses.txt`) that answers DNS on more
    /// ports than 53, as OpenDNS does on 5353 and 443.
    static let listedResolver = "208.67.222.222"
    static let listedResolver6 = "2620:119:35::35"
    /// Its ports, each a dnsmasq over UDP and TCP: plain DNS, DNS on 5353 (OpenDNS), 443 (DNSCrypt,
    /// DoH over TCP, HTTP/3 over UDP), 853 (DoT, DoQ), 784 and 8853 (DoQ's other ports). Stand-ins:
    /// what matters is that an answer from the real resolver comes back on that port or not.
    static let listedResolverPorts = [53, 5353, 443, 853, 784, 8853]

    /// Starts the listed resolver in `outside`: each port answers instagram.com with its real
    /// address and ready.test with 10.0.0.1.
    func startListedResolver() throws {
        try inside(outside, "ip addr add \(Self.listedResolver)/32 dev lo", "ip -6 addr add \(Self.listedResolver6)/128 dev lo")
        for port in Self.listedResolverPorts {
            let server = try Child("/usr/sbin/ip", ["netns", "exec", outside, "/usr/sbin/dnsmasq", "--no-daemon", "--conf-file=/dev/null",
                "--port=\(port)", "--listen-address=\(Self.listedResolver),\(Self.listedResolver6)", "--bind-interfaces", "--no-resolv",
                "--no-hosts", "--pid-file=", "--host-record=instagram.com,\(Self.realAddress)", "--host-record=ready.test,10.0.0.1"],
                scratch: scratch, label: "\(outside)-listed-\(port)")
            children.append(server)
            var answered = false
            for _ in 0..<100 where !answered {
                answered = try dig(from: outside, server: Self.listedResolver, "ready.test", port: port) == "10.0.0.1"
                if !answered {
                    guard server.isRunning else { throw HarnessError("dnsmasq on port \(port) exited: \(server.stderr)") }
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            guard answered else { throw HarnessError("the listed resolver does not answer on port \(port)") }
        }
    }

    /// The real helper, in `namespace`, with the firewall settings of `firewall` (TOML lines for
    /// `[firewall]`) and `instagram.com` blocked. It listens on 127.0.0.1 (the harness's port),
    /// on each of `listen` and, for a router, on `lanListen` (0.0.0.0:53) for the LAN.
    func startHelper(in namespace: String, firewall: String, mode: PrivilegeMode = .root, blocklist: [String] = ["instagram.com"],
                     listen: [String] = [], lanListen: String = "0.0.0.0:53",
                     upstream: String = "\(FirewallLab.upstream):53") throws -> (Sinkhole, config: String) {
        let config = try scratch.file("firewall-\(namespace).toml", "[firewall]\n" + firewall + "\n")
        chmod(config, 0o644)
        // An ordinary user's helper reads a file it owns (SPEC §11), in a folder it may enter.
        if mode == .ordinaryUser {
            chown(config, PrivilegeMode.ordinaryUID, PrivilegeMode.ordinaryGID)
            chmod(scratch.path, 0o755)
        }
        var extra = ["--config", config, "--upstream", upstream]
        if namespace == router { extra += ["--listen", lanListen] }
        for address in listen { extra += ["--listen", address] }
        let helper = try Sinkhole(scratch: scratch, upstreams: [], blocklist: blocklist, extra: extra, mode: mode,
                                  wrapper: [.namespace(namespace)])
        return (helper, config)
    }

    /// Waits until the table is in `namespace` (`present`) or gone, for at most `seconds`.
    func waitForTable(in namespace: String, present: Bool, seconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if tableExists(in: namespace) == present { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw HarnessError("table inet scrolloff is \(present ? "not there" : "still there") in \(namespace) after \(seconds) s: \(table(in: namespace))")
    }

    func tableExists(in namespace: String) -> Bool {
        (try? runWithStatus("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/sbin/nft", "list", "table", "inet", "scrolloff"]).exitCode) == 0
    }

    func table(in namespace: String) -> String {
        (try? run("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/sbin/nft", "list", "table", "inet", "scrolloff"])) ?? ""
    }

    /// `dig +short NAME @SERVER -p PORT` from `namespace`, over UDP or TCP (SERVER may be an IPv6
    /// address); `as` runs dig as another user (`setpriv`), as a person without root would.
    func dig(from namespace: String, server: String, _ name: String, tcp: Bool = false, port: Int = 53, as uid: uid_t? = nil) throws -> String {
        let user = uid.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
        return try run("/usr/sbin/ip", ["netns", "exec", namespace] + user + ["/usr/bin/dig", "@\(server)", "-p", "\(port)", "+short", "+time=2", "+tries=1"]
            + (tcp ? ["+tcp"] : []) + [name]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Connects over TCP (or sends a datagram over UDP) from `namespace`: "connected" (the
    /// listener's greeting or echo came), "refused" (a TCP reset, ICMP port unreachable on a
    /// connected UDP socket, or EPERM from send() when this machine's own output hook rejected
    /// it) or another error's name.
    func connect(from namespace: String, to address: String, port: Int, udp: Bool = false) throws -> String {
        let script = try scratch.file("connect-\(UUID().uuidString).py", """
            import socket
            try:
                if \(udp ? "True" : "False"):
                    s = socket.socket(socket.AF_INET6 if ":" in "\(address)" else socket.AF_INET, socket.SOCK_DGRAM)
                    s.settimeout(3); s.connect(("\(address)", \(port))); s.send(b"probe")
                else:
                    s = socket.create_connection(("\(address)", \(port)), timeout=3)
                print("connected" if s.recv(16) == b"hello\\n" else "no greeting")
            except ConnectionRefusedError:
                print("refused")
            except PermissionError:
                # A local program's datagram that the output hook rejects never leaves: send()
                # fails at once with EPERM (the ICMP error comes after). Refused, for a local program.
                print("refused")
            except Exception as e:
                print(type(e).__name__)
            """)
        return try run("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/python3", script]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Tables of other tools, put in before the helper: one in another family under our table's
    /// name (`ip scrolloff`), and one with a chain and a rule on the output hook. The helper, its
    /// stop and `make uninstall` must leave both exactly as they were.
    static let foreignTables = """
        table ip scrolloff {
        \tset keep { type ipv4_addr; elements = { 192.0.2.1 } }
        }
        table inet othertool {
        \tchain out {
        \t\ttype filter hook output priority 10; policy accept;
        \t\tudp dport 5999 counter
        \t}
        }

        """

    func addForeignTables(in namespace: String) throws {
        let file = try scratch.file("foreign-\(namespace).nft", Self.foreignTables)
        try inside(namespace, "nft -f \(file)")
    }

    /// The foreign tables as nft lists them now (empty when they are gone).
    func foreignTables(in namespace: String) -> String {
        ["ip scrolloff", "inet othertool"].map {
            (try? run("/usr/sbin/ip", ["netns", "exec", namespace, "/bin/sh", "-c", "nft list table \($0) 2>/dev/null"])) ?? ""
        }.joined()
    }

    private func addNamespace(_ name: String) throws {
        let outcome = try runWithStatus("/usr/sbin/ip", ["netns", "add", name])
        guard outcome.exitCode == 0 else { throw HarnessError("ip netns add \(name): \(outcome)") }
        namespaces.append(name)
    }

    func inside(_ namespace: String, _ commands: String...) throws {
        for command in commands {
            let outcome = try runWithStatus("/usr/sbin/ip", ["netns", "exec", namespace, "/bin/sh", "-c", command])
            guard outcome.exitCode == 0 else { throw HarnessError("in \(namespace): \(command): \(outcome)") }
        }
    }

    private func sh(_ commands: String...) throws {
        for command in commands {
            let outcome = try runWithStatus("/bin/sh", ["-c", command])
            guard outcome.exitCode == 0 else { throw HarnessError("\(command): \(outcome)") }
        }
    }

    private func tearDown() {
        dnsmasq = nil
        children.removeAll() // Child's deinit ends each process by its pid
        for name in namespaces { _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", name]) }
        namespaces.removeAll()
    }

    deinit { tearDown() }
}
