#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// SPEC §11 "New addresses": a device in a MAC profile is in its profile from the
/// first query from any new IPv4 or IPv6 address. The device keeps this machine's MAC cached, so
/// its first datagram from a new address comes with no ARP or NDP exchange before it and the
/// kernel has no neighbour entry for that address yet (on main it got the real answer, 10 of 10).
/// The rig of `DeviceMACEndToEndTests` (a veth pair into a namespace per device, the helper on the
/// host ends, `dig` inside), with namespaces and subnets of its own (`soc-kNdv-PID`, `soc-gNdv-PID`: the first two letters name the veths).
@Suite struct NewAddressEndToEndTests {
    typealias Namespace = DeviceMACEndToEndTests.Namespace

    static let kidMAC = "02:5c:00:00:31:0a"
    static let guestMAC = "02:5c:00:00:31:0b"

    /// A /24 per namespace, apart from `DeviceMACEndToEndTests`' (10.77–126.x) so both suites can
    /// run at once, and per process id so other clones' runs do not collide either.
    static func subnet(_ n: Int) -> String { "10.\(180 + Int(getpid() % 50)).\(Int(getpid() / 50 % 200) + 30 + n)" }

    /// The helper on the host ends of a kid's and a guest's veth; the kids profile (by MAC) blocks
    /// instagram, the default profile (the guest's) blocks nothing.
    final class Rig {
        let scratch: Scratch
        let upstream: Dnsmasq
        let kid: Namespace
        let guest: Namespace
        let server: Sinkhole
        let port: Int

        init(tag: String, subnets: (Int, Int), mode: PrivilegeMode = .root) throws {
            scratch = try Scratch()
            upstream = try Dnsmasq(scratch: scratch)
            kid = try Namespace(tag: "k\(tag)dv", subnet: NewAddressEndToEndTests.subnet(subnets.0), mac: NewAddressEndToEndTests.kidMAC,
                                address: "10")
            do {
                guest = try Namespace(tag: "g\(tag)dv", subnet: NewAddressEndToEndTests.subnet(subnets.1), mac: NewAddressEndToEndTests.guestMAC,
                                      address: "10")
            } catch {
                kid.remove()
                throw error
            }
            do {
                port = try FreePort.pick()
                let config = try scratch.file("scrolloff.toml", """
                    [[profiles]]
                    name = "kids"
                    clients = ["\(NewAddressEndToEndTests.kidMAC)"]
                    """)
                var listen: [String] = []
                for ns in [kid, guest] { listen += ["--listen", "\(ns.subnet).1:\(port)", "--listen", "[\(ns.v6Prefix)::1]:\(port)"] }
                server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--config", config] + listen, mode: mode)
                let blocked = try server.cli(["block", "instagram", "--profile", "kids"])
                guard blocked.exitCode == 0 else { throw HarnessError("scrolloff block: \(blocked)") }
            } catch {
                kid.remove()
                guest.remove()
                throw error
            }
        }

        /// Deleting the namespaces removes both veth ends, and with the host ends their neighbour entries.
        func remove() {
            kid.remove()
            guest.remove()
        }
    }

    /// `dig +short A` from `source` inside `ns` (the source chosen with `-b`), one try.
    static func ask(_ ns: Namespace, _ name: String, from source: String, port: Int, tries: Int = 1) throws -> String {
        let server = source.contains(":") ? "\(ns.v6Prefix)::1" : "\(ns.subnet).1"
        return try run("/usr/sbin/ip", ["netns", "exec", ns.name, "/usr/bin/dig", "-b", source, "@\(server)", "-p", "\(port)",
                                        "+time=3", "+tries=\(tries)", "+short", name, "A"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The device takes one more address, keeping the others and its neighbour cache (a privacy
    /// address, a second lease), and this machine forgets every neighbour on that link.
    static func addAddress(_ ns: Namespace, _ address: String) throws {
        let prefix = address.contains(":") ? "64" : "24"
        var arguments = ["-n", ns.name, "addr", "add", "\(address)/\(prefix)", "dev", ns.deviceSide]
        if address.contains(":") { arguments.append("nodad") }
        let added = try runWithStatus("/usr/sbin/ip", arguments)
        guard added.exitCode == 0 else { throw HarnessError("ip \(arguments.joined(separator: " ")): \(added)") }
        try flushHostNeighbours(ns)
    }

    static func flushHostNeighbours(_ ns: Namespace) throws {
        for family in ["-4", "-6"] {
            let flushed = try runWithStatus("/usr/sbin/ip", [family, "neigh", "flush", "dev", ns.hostSide])
            guard flushed.exitCode == 0 else { throw HarnessError("ip neigh flush dev \(ns.hostSide): \(flushed)") }
        }
    }

    /// The first query from each of 10 new IPv4 and 10 new IPv6 addresses, each added just before
    /// its query with this machine's neighbour entries flushed: blocked, 10 of 10 each. Run as root,
    /// as an ordinary user and under the unit's capabilities: a neighbour dump needs no privilege.
    @Test(arguments: PrivilegeMode.allCases)
    func a_kid_devices_first_query_from_a_new_address_is_blocked_10_of_10(mode: PrivilegeMode) throws {
        let rig = try Rig(tag: "\(PrivilegeMode.allCases.firstIndex(of: mode) ?? 0)", subnets: mode == .root ? (0, 1) : mode == .ordinaryUser ? (2, 3) : (4, 5),
                          mode: mode)
        defer { rig.remove() }
        mode.check(rig.server.child.process.pid)
        // From its first address (its ARP and NDP exchange with this machine came first): blocked.
        #expect(try Self.ask(rig.kid, "www.instagram.com", from: "\(rig.kid.subnet).10", port: rig.port, tries: 2) == "0.0.0.0")
        #expect(try Self.ask(rig.kid, "www.instagram.com", from: "\(rig.kid.v6Prefix)::10", port: rig.port, tries: 2) == "0.0.0.0")
        var answers: [String] = []
        for i in 0..<10 {
            for source in ["\(rig.kid.subnet).\(100 + i)", "\(rig.kid.v6Prefix)::\(100 + i)"] {
                try Self.addAddress(rig.kid, source)
                answers.append("\(source) \(try Self.ask(rig.kid, "www.instagram.com", from: source, port: rig.port))")
            }
        }
        let blocked = answers.filter { $0.hasSuffix(" 0.0.0.0") }
        #expect(blocked.count == 20, "blocked \(blocked.count) of 20 first queries: \(answers)")
        // Names no profile manages are answered as ever from a new address.
        try Self.addAddress(rig.kid, "\(rig.kid.subnet).120")
        #expect(try Self.ask(rig.kid, "host.test", from: "\(rig.kid.subnet).120", port: rig.port) == "10.0.0.7")
        #expect(rig.server.child.isRunning)
    }

    /// What the strictest answer costs a device in no MAC profile, and that it is only the first
    /// query: the reply made the kernel learn the address, so the next query follows the device's
    /// own profile (the default, which blocks nothing).
    @Test func a_guest_device_is_answered_by_its_own_profile_from_its_second_query_on() throws {
        let rig = try Rig(tag: "6", subnets: (6, 7))
        defer { rig.remove() }
        // From its first addresses, over both families: the device learns this machine's MACs
        // (else its first IPv6 query would begin with an NDP exchange that tells the kernel its address).
        #expect(try Self.ask(rig.guest, "www.instagram.com", from: "\(rig.guest.subnet).10", port: rig.port, tries: 2) == "10.20.30.40")
        #expect(try Self.ask(rig.guest, "www.instagram.com", from: "\(rig.guest.v6Prefix)::10", port: rig.port, tries: 2) == "10.20.30.40")
        for source in ["\(rig.guest.subnet).101", "\(rig.guest.v6Prefix)::101"] {
            try Self.addAddress(rig.guest, source)
            let first = try Self.ask(rig.guest, "www.instagram.com", from: source, port: rig.port)
            #expect(first == "0.0.0.0", "from \(source), first query: \(first)")
            let second = try Self.ask(rig.guest, "www.instagram.com", from: source, port: rig.port)
            #expect(second == "10.20.30.40", "from \(source), second query: \(second)")
        }
    }

    /// A dnspython client inside `ns`: one query for `name` from each of `sources` at once, then
    /// every answer (or NONE) as "SOURCE ANSWER" lines. Waits at most 6 s in all.
    static func burst(_ ns: Namespace, sources: [String], name: String, port: Int, scratch: Scratch) throws -> [String: String] {
        let script = try scratch.file("burst-\(UUID().uuidString).py", """
            import select, socket, sys, time
            import dns.message, dns.rcode
            port, name, server4, server6 = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
            pending = {}
            for source in sys.argv[5:]:
                family = socket.AF_INET6 if ":" in source else socket.AF_INET
                s = socket.socket(family, socket.SOCK_DGRAM)
                s.bind((source, 0))
                s.sendto(dns.message.make_query(name, "A").to_wire(), (server6 if ":" in source else server4, port))
                pending[s] = source
            answers = {}
            deadline = time.time() + 6
            while pending and time.time() < deadline:
                ready, _, _ = select.select(list(pending), [], [], 0.2)
                for s in ready:
                    m = dns.message.from_wire(s.recv(4096))
                    answers[pending.pop(s)] = ",".join(r.to_text() for rrset in m.answer for r in rrset) or dns.rcode.to_text(m.rcode())
            for source in sys.argv[5:]:
                print(source, answers.get(source, "NONE"))
            """)
        let output = try run("/usr/sbin/ip", ["netns", "exec", ns.name, "/usr/bin/python3", script, "\(port)", name,
                                              "\(ns.subnet).1", "\(ns.v6Prefix)::1"] + sources)
        var answers: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2, sources.contains(String(parts[0])) { answers[String(parts[0])] = String(parts[1]) }
        }
        guard answers.count == sources.count else { throw HarnessError("burst: \(output)") }
        return answers
    }

    /// 40 new IPv4 and 40 new IPv6 addresses (more than the 10 table reads a second the cache
    /// allows) each send their first query at once: none is answered open.
    @Test func a_burst_of_new_addresses_is_blocked_every_one() throws {
        let rig = try Rig(tag: "7", subnets: (8, 9))
        defer { rig.remove() }
        #expect(try Self.ask(rig.kid, "www.instagram.com", from: "\(rig.kid.subnet).10", port: rig.port, tries: 2) == "0.0.0.0")
        #expect(try Self.ask(rig.kid, "www.instagram.com", from: "\(rig.kid.v6Prefix)::10", port: rig.port, tries: 2) == "0.0.0.0")
        let sources = (0..<40).map { "\(rig.kid.subnet).\(150 + $0)" } + (0..<40).map { "\(rig.kid.v6Prefix)::2:\(String($0, radix: 16))" }
        let batch = try rig.scratch.file("addresses.batch", sources.map { s in
            s.contains(":") ? "addr add \(s)/64 dev \(rig.kid.deviceSide) nodad" : "addr add \(s)/24 dev \(rig.kid.deviceSide)"
        }.joined(separator: "\n") + "\n")
        let added = try runWithStatus("/usr/sbin/ip", ["-n", rig.kid.name, "-batch", batch])
        try #require(added.exitCode == 0, "\(added)")
        try Self.flushHostNeighbours(rig.kid)
        let answers = try Self.burst(rig.kid, sources: sources, name: "www.instagram.com", port: rig.port, scratch: rig.scratch)
        let open = answers.filter { $0.value.contains("10.20.30.40") }
        let blocked = answers.filter { $0.value == "0.0.0.0" }
        #expect(open.isEmpty, "answered open: \(open.keys.sorted())")
        #expect(blocked.count == sources.count, "\(answers.sorted { $0.key < $1.key })")
    }

    /// A spray of datagrams from 300 spoofed IPv6 and 60 spoofed IPv4 source addresses on the
    /// kid's link (sent with IP_TRANSPARENT, so none is an address of the device and none ever gets
    /// a neighbour entry): the helper's memory stays flat, and the guest (a known device) and the
    /// kid keep their answers throughout.
    @Test func a_spray_of_spoofed_source_addresses_stays_bounded_and_other_clients_keep_their_answers() throws {
        let rig = try Rig(tag: "8", subnets: (10, 11))
        defer { rig.remove() }
        let guestSource = "\(rig.guest.subnet).10", kidSource = "\(rig.kid.subnet).10"
        #expect(try Self.ask(rig.guest, "host.test", from: guestSource, port: rig.port, tries: 2) == "10.0.0.7")
        #expect(try Self.ask(rig.kid, "www.instagram.com", from: kidSource, port: rig.port, tries: 2) == "0.0.0.0")
        let pid = rig.server.child.process.pid
        let before = residentKiB(pid).now
        let script = try rig.scratch.file("spray.py", """
            import random, socket, sys, time
            import dns.message
            port, subnet, prefix = int(sys.argv[1]), sys.argv[2], sys.argv[3]
            query = dns.message.make_query("www.instagram.com", "A").to_wire()
            sent = 0
            for rounds in range(3):
                for i in range(100):
                    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
                    s.setsockopt(41, 75, 1)  # IPV6_TRANSPARENT: send from an address that is not ours
                    s.bind(("%s::%x:%x" % (prefix, random.randrange(1, 65535), random.randrange(1, 65535)), 0))
                    s.sendto(query, (prefix + "::1", port))
                    s.close()
                    sent += 1
                for i in range(150):
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    s.setsockopt(0, 19, 1)  # IP_TRANSPARENT
                    s.bind(("%s.%d" % (subnet, 60 + i % 30 + 100 * (i % 2)), 0))
                    s.sendto(query, (subnet + ".1", port))
                    s.close()
                    sent += 1
                time.sleep(0.2)
            print("sent", sent)
            """)
        let spray = try Child("/usr/sbin/ip", ["netns", "exec", rig.kid.name, "/usr/bin/python3", script, "\(rig.port)", rig.kid.subnet, rig.kid.v6Prefix],
                              scratch: rig.scratch, label: "spray")
        var guestAnswers: [String] = [], kidAnswers: [String] = []
        var slowest = 0.0
        while spray.isRunning || guestAnswers.count < 10 {
            let start = Date()
            guestAnswers.append(try Self.ask(rig.guest, "host.test", from: guestSource, port: rig.port))
            slowest = max(slowest, Date().timeIntervalSince(start))
            kidAnswers.append(try Self.ask(rig.kid, "www.instagram.com", from: kidSource, port: rig.port))
            if guestAnswers.count > 200 { break }
        }
        _ = try spray.waitForLine(seconds: 30) { $0.hasPrefix("sent ") }
        let after = residentKiB(pid).now
        print("spray: \(guestAnswers.count) guest answers, slowest \(slowest) s; helper VmRSS \(before) → \(after) KiB")
        #expect(guestAnswers.allSatisfy { $0 == "10.0.0.7" }, "\(guestAnswers)")
        #expect(kidAnswers.allSatisfy { $0 == "0.0.0.0" }, "\(kidAnswers)")
        // dig's own start and `ip netns exec` are most of it; an answer held up by the spray would take seconds.
        #expect(slowest < 2, "slowest guest answer during the spray: \(slowest) s")
        #expect(after - before < 8 * 1024, "resident memory grew from \(before) KiB to \(after) KiB over 750 datagrams from 360 spoofed sources")
        #expect(rig.server.child.isRunning)
    }

    /// Nested client networks and an IPv4-mapped address beside its IPv4 form: `profile
    /// list` and the start's log say which profile wins.
    @Test func profile_list_and_the_start_log_say_which_profile_wins_where_networks_nest() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let config = try scratch.file("scrolloff.toml", """
            [[profiles]]
            name = "adults"
            clients = ["10.31.0.0/16"]

            [[profiles]]
            name = "kids"
            clients = ["::ffff:10.31.5.0/120"]
            """)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--config", config])
        let list = try server.cli(["profile", "list"])
        #expect(list.exitCode == 0, "\(list)")
        #expect(list.output.contains("overlap: 10.31.5.0/24 (profile kids) lies inside 10.31.0.0/16 (profile adults): clients in 10.31.5.0/24 follow kids"),
                "\(list)")
        #expect(server.child.stderr.contains("profiles overlap: 10.31.5.0/24 (profile kids) lies inside 10.31.0.0/16"), "\(server.child.stderr)")
    }
}
