#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// SPEC §9: a profile can name a device by its MAC address; the helper learns the
/// device's addresses from the kernel's neighbour table, so a kid whose device changes its IP stays
/// in their profile. Real network namespaces and a veth pair with a fixed MAC, the real binary,
/// real `dig` from inside the namespace.
@Suite struct DeviceMACEndToEndTests {
    /// A namespace joined to this one by a veth pair: `host` here, `device` inside with `mac`.
    final class Namespace {
        let name: String
        let hostSide: String
        let deviceSide: String
        let subnet: String
        /// A ULA /64 derived from the IPv4 subnet, so parallel namespaces never share one.
        var v6Prefix: String { "fd5c:" + subnet.split(separator: ".").dropFirst().map { String(Int($0) ?? 0, radix: 16) }.joined(separator: ":") }

        init(tag: String, subnet: String, mac: String, address: String) throws {
            let suffix = "\(getpid() % 100_000)"
            name = "soc-\(tag)-\(suffix)"
            hostSide = "soch\(tag.prefix(2))\(suffix)"
            deviceSide = "socd\(tag.prefix(2))\(suffix)"
            self.subnet = subnet
            // A namespace left by a killed earlier run of this same process id is ours to remove.
            _ = try runWithStatus("/usr/sbin/ip", ["netns", "del", name])
            for step in [
                ["netns", "add", name],
                ["link", "add", hostSide, "type", "veth", "peer", "name", deviceSide],
                ["link", "set", deviceSide, "netns", name],
                ["addr", "add", "\(subnet).1/24", "dev", hostSide],
                // IPv6 too (NDP fills the same neighbour table); nodad: usable at once.
                ["addr", "add", "\(v6Prefix)::1/64", "dev", hostSide, "nodad"],
                ["link", "set", hostSide, "up"],
                ["-n", name, "link", "set", deviceSide, "address", mac],
                ["-n", name, "link", "set", "lo", "up"],
            ] {
                try Self.ip(step, cleanup: name)
            }
            try move(to: address)
        }

        /// The device takes a new address, as a phone does on a new lease: the link goes down and
        /// up (which empties its own neighbour cache) with only the new address on it.
        func move(to address: String) throws {
            for step in [
                ["-n", name, "link", "set", deviceSide, "down"],
                ["-n", name, "addr", "flush", "dev", deviceSide],
                ["-n", name, "addr", "add", "\(subnet).\(address)/24", "dev", deviceSide],
                ["-n", name, "addr", "add", "\(v6Prefix)::\(address)/64", "dev", deviceSide, "nodad"],
                ["-n", name, "link", "set", deviceSide, "up"],
            ] {
                try Self.ip(step, cleanup: nil)
            }
        }

        /// `dig +short A` from inside the namespace, over IPv4 or IPv6.
        func shortA(_ name: String, port: Int, v6: Bool = false) throws -> String {
            let server = v6 ? "\(v6Prefix)::1" : "\(subnet).1"
            return try run("/usr/sbin/ip", ["netns", "exec", self.name, "/usr/bin/dig", "@\(server)", "-p", "\(port)", "+time=3", "+tries=2",
                                            "+short", name, "A"]).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Deleting the namespace destroys its veth end, and with it the host end.
        func remove() { _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", name]) }

        private static func ip(_ arguments: [String], cleanup: String?) throws {
            let outcome = try runWithStatus("/usr/sbin/ip", arguments)
            guard outcome.exitCode == 0 else {
                if let cleanup { _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", cleanup]) }
                throw HarnessError("ip \(arguments.joined(separator: " ")) failed: \(outcome)")
            }
        }
    }

    @Test func a_kid_device_that_changes_its_ip_keeps_its_profile_by_mac() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let subnet = "10.\(77 + Int(getpid() % 50)).\(Int(getpid() / 50 % 200) + 20)"
        let kid = try Namespace(tag: "kid", subnet: subnet, mac: "02:5c:00:00:77:0a", address: "10")
        defer { kid.remove() }
        let port = try FreePort.pick()
        let config = try scratch.file("scrolloff.toml", """
            [[profiles]]
            name = "kids"
            clients = ["02:5C:00:00:77:0A"]
            """)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port],
                                  extra: ["--config", config, "--listen", "\(subnet).1:\(port)", "--listen", "[\(kid.v6Prefix)::1]:\(port)",
                                          "--web-listen", "\(subnet).1:0"])
        let blocked = try server.cli(["block", "instagram", "--profile", "kids"])
        #expect(blocked.exitCode == 0, "\(blocked)")

        // The default profile blocks nothing: this machine's own query is answered…
        #expect(try dig(server.port, ["+short", "www.instagram.com", "A"]).trimmingCharacters(in: .whitespacesAndNewlines) == "10.20.30.40")
        // …while the kid's device, known only by its MAC, is blocked…
        #expect(try kid.shortA("www.instagram.com", port: port) == "0.0.0.0")
        // …and stays blocked from its next address, from the first query on.
        for address in ["20", "33", "47"] {
            try kid.move(to: address)
            for v6 in [false, true] {
                let answer = try kid.shortA("www.instagram.com", port: port, v6: v6)
                let neighbours = try run("/usr/sbin/ip", ["neigh", "show", "dev", kid.hostSide])
                #expect(answer == "0.0.0.0", "from address \(address) (IPv6: \(v6)): \(answer); neighbours: \(neighbours)")
            }
        }
        #expect(try kid.shortA("host.test", port: port) == "10.0.0.7")
        #expect(try kid.shortA("host.test", port: port, v6: true) == "10.0.0.7")
        // The household page knows the device as DNS does (SPEC §9a): by its MAC, at its new address.
        let web = try server.child.waitForLine { $0.hasPrefix("listening web \(subnet).1:") }
        let webPort = try #require(web.split(separator: ":").last.flatMap { Int($0) })
        let page = try run("/usr/sbin/ip", ["netns", "exec", kid.name, "/usr/bin/curl", "-s", "--max-time", "5", "http://\(subnet).1:\(webPort)/"])
        #expect(page.contains("Profile kids") && page.contains("id=\"entry-instagram\" data-state=\"blocked\""), "\(page)")
    }

    @Test func a_reload_that_names_a_locked_devices_mac_in_another_profile_waits_for_the_lock() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let subnet = "10.\(77 + Int(getpid() % 50)).\(Int(getpid() / 50 % 200) + 22)"
        let kid = try Namespace(tag: "mv", subnet: subnet, mac: "02:5c:00:00:77:0c", address: "10")
        defer { kid.remove() }
        let port = try FreePort.pick()
        let config = try scratch.file("scrolloff.toml", """
            [[profiles]]
            name = "kids"
            clients = ["\(subnet).0/24"]
            """)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port],
                                  extra: ["--config", config, "--listen", "\(subnet).1:\(port)"])
        #expect(try server.cli(["block", "instagram", "--profile", "kids"]).exitCode == 0)  // a 2 h cooldown
        #expect(try kid.shortA("www.instagram.com", port: port) == "0.0.0.0")

        // Claiming the kid's MAC for a profile that blocks nothing would free the device: it waits.
        try ReloadEndToEndTests.write(config, """
            [[profiles]]
            name = "kids"
            clients = ["\(subnet).0/24"]

            [[profiles]]
            name = "free"
            clients = ["02:5c:00:00:77:0c"]
            """)
        server.child.signal(SIGHUP)
        #expect(ReloadEndToEndTests.eventually { server.child.stderr.contains("would take devices from profile kids") }, "\(server.child.stderr)")
        #expect(try kid.shortA("www.instagram.com", port: port) == "0.0.0.0")
    }

    @Test func unknown_devices_can_follow_a_strict_profile_while_the_machine_itself_stays_default() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let subnet = "10.\(77 + Int(getpid() % 50)).\(Int(getpid() / 50 % 200) + 21)"
        let guest = try Namespace(tag: "gst", subnet: subnet, mac: "02:5c:00:00:77:0b", address: "40")
        defer { guest.remove() }
        let port = try FreePort.pick()
        let config = try scratch.file("scrolloff.toml", """
            [profile]
            unknown_devices = "strict"

            [[profiles]]
            name = "strict"
            clients = ["192.0.2.1/32"]
            """)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port],
                                  extra: ["--config", config, "--listen", "\(subnet).1:\(port)"])
        #expect(try server.cli(["block", "instagram", "--profile", "strict"]).exitCode == 0)
        #expect(try guest.shortA("www.instagram.com", port: port) == "0.0.0.0")
        #expect(try dig(server.port, ["+short", "www.instagram.com", "A"]).trimmingCharacters(in: .whitespacesAndNewlines) == "10.20.30.40")
    }
}
