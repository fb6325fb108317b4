#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// SPEC §5a: an owner's pause, with the real helper and CLI, a kid's device in a network namespace
/// of its own (veth, `soc-allow-PID`) and this machine as the default profile. One helper for every
/// case: the pause flips DNS within a second for the kid only, ends on time with no command,
/// survives a restart, and a pause made with the state disk full (a 4 MiB tmpfs filled by `dd`)
/// still blocks and still ends on time. Needs root (namespaces, the tmpfs), as `make test` runs;
/// the helper runs as people run it (root, an ordinary user, root under the unit's capabilities).
@Suite(.serialized) struct PauseEndToEndTests {
    static let name = "host.test"
    static let real = "10.0.0.7"

    /// The seconds until the kid's device is answered `expected` again, polling every 100 ms.
    static func secondsUntil(_ kid: DeviceMACEndToEndTests.Namespace, port: Int, answer expected: String, within limit: Double) throws -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < limit {
            if try kid.shortA(name, port: port) == expected { return Date().timeIntervalSince(start) }
            usleep(100_000)
        }
        return nil
    }

    @Test(arguments: PrivilegeMode.allCases)
    func a_pause_flips_the_kids_dns_only_ends_on_time_survives_a_restart_and_a_full_disk(_ mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let index = PrivilegeMode.allCases.firstIndex(of: mode) ?? 0
        let disk = try SmallDisk(at: try RestartableHelper.folders(scratch: scratch, mode: mode).state,
                                 owner: mode == .ordinaryUser ? PrivilegeMode.ordinaryUID : nil)
        defer { disk.unmount() }
        let upstream = try Dnsmasq(scratch: scratch)
        // The modes run side by side: each its own subnet and namespace.
        let subnet = "10.\(77 + Int(getpid() % 50)).\(Int(getpid() / 50 % 200) + 24 + index)"
        let kid = try DeviceMACEndToEndTests.Namespace(tag: ["allow", "puser", "pcaps"][index], subnet: subnet,
                                                       mac: "02:5c:00:00:77:1\(index)", address: "10")
        defer { kid.remove() }
        let port = try FreePort.pick()
        let config = try scratch.file("scrolloff.toml", """
            [[profiles]]
            name = "kids"
            clients = ["\(subnet).0/24"]
            """)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port, arguments: ["--config", config, "--listen", "\(subnet).1:\(port)"],
                                           mode: mode)
        defer { helper.stop() }
        #expect(try kid.shortA(Self.name, port: port) == Self.real)

        // Paused: the kid's next query is blocked, this machine (the default profile) is answered.
        let paused = try helper.cli(["pause", "--profile", "kids", "4s", "--reason", "dinner"])
        let pausedAt = Date()
        #expect(paused.exitCode == 0, "\(paused)")
        #expect(try kid.shortA(Self.name, port: port) == "0.0.0.0")
        #expect(Date().timeIntervalSince(pausedAt) < 1.0)
        #expect(try shortA(helper.port, Self.name) == Self.real)
        let status = try jsonObject(try helper.cli(["status", "--profile", "kids", "--json"]).output)
        #expect((status["pause"] as? [String: Any])?["reason"] as? String == "dinner", "\(status)")

        // It ends by itself at its end, within a second of it.
        let reopened = try #require(try Self.secondsUntil(kid, port: port, answer: Self.real, within: 8), "still blocked 8 s after a 4 s pause")
        #expect(abs(Date().timeIntervalSince(pausedAt) - 4) < 1.5, "answered again after \(reopened) s of polling")

        // A pause survives a restart; an owner's resume lifts it at once.
        #expect(try helper.cli(["pause", "--profile", "kids", "10m"]).exitCode == 0)
        try helper.restart()
        #expect(try kid.shortA(Self.name, port: port) == "0.0.0.0", "the pause came back with the helper")
        let resumed = try helper.cli(["resume", "--profile", "kids"])
        #expect(resumed.exitCode == 0, "\(resumed)")
        #expect(try kid.shortA(Self.name, port: port) == Self.real)

        // With the state disk full a pause is still enforced, and ends on time.
        try disk.fill()
        let held = try helper.cli(["pause", "--profile", "kids", "3s"])
        let heldAt = Date()
        #expect(held.exitCode == 0, "\(held)")
        #expect(try kid.shortA(Self.name, port: port) == "0.0.0.0")
        _ = try #require(try Self.secondsUntil(kid, port: port, answer: Self.real, within: 6), "still blocked 6 s after a 3 s pause on a full disk")
        #expect(abs(Date().timeIntervalSince(heldAt) - 3) < 1.5)
        disk.free()
    }
}
