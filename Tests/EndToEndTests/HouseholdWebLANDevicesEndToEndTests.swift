#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A home LAN is one IPv6 /64: the page tells its devices apart by the MAC the kernel's neighbour
/// table knows (SPEC §9a), so one device's wrong passwords do not lock the others out. A bridge
/// on the host, as a home router's LAN, and a namespace per device, each with its own MAC.
@Suite("Household page: devices of one IPv6 LAN")
struct HouseholdWebLANDevicesEndToEndTests {
    @Test func a_device_that_used_up_its_sign_in_tries_does_not_hold_back_another_of_the_same_64() throws {
        let suffix = "\(getpid() % 100_000)"
        let prefix = "fd77:5c0f:\(String(getpid() % 65_536, radix: 16))"
        let bridge = "brlive\(suffix)"
        let devices = [(tag: "a", mac: "02:5c:0f:00:0a:01", address: "\(prefix)::a:1"), (tag: "b", mac: "02:5c:0f:00:00:02", address: "\(prefix)::2")]
        func ip(_ arguments: [String]) throws {
            let outcome = try runWithStatus("/usr/sbin/ip", arguments)
            guard outcome.exitCode == 0 else { throw HarnessError("ip \(arguments.joined(separator: " ")) failed: \(outcome)") }
        }
        defer {
            for device in devices { _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", "live-\(device.tag)-\(suffix)"]) }
            _ = try? runWithStatus("/usr/sbin/ip", ["link", "del", bridge])
        }
        _ = try runWithStatus("/usr/sbin/ip", ["link", "del", bridge])
        try ip(["link", "add", bridge, "type", "bridge"])
        try ip(["addr", "add", "\(prefix)::1/64", "dev", bridge, "nodad"])
        try ip(["link", "set", bridge, "up"])
        for device in devices {
            let namespace = "live-\(device.tag)-\(suffix)", host = "vlive\(device.tag)h\(suffix)", inside = "vlive\(device.tag)d\(suffix)"
            _ = try runWithStatus("/usr/sbin/ip", ["netns", "del", namespace])
            for step in [
                ["netns", "add", namespace],
                ["link", "add", host, "type", "veth", "peer", "name", inside],
                ["link", "set", inside, "netns", namespace],
                ["link", "set", host, "master", bridge],
                ["link", "set", host, "up"],
                ["-n", namespace, "link", "set", inside, "address", device.mac],
                ["-n", namespace, "addr", "add", "\(device.address)/64", "dev", inside, "nodad"],
                ["-n", namespace, "link", "set", inside, "up"],
                ["-n", namespace, "link", "set", "lo", "up"],
            ] {
                try ip(step)
            }
        }

        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch, ownerPassword: true, webListen: "[\(prefix)::1]:0")
        func browser(_ device: Int) -> WebDevice {
            WebDevice(base: "http://[\(prefix)::1]:\(helper.webPort)", address: devices[device].address,
                      jar: "\(scratch.path)/jar-\(devices[device].tag)", namespace: "live-\(devices[device].tag)-\(suffix)")
        }
        let guesser = browser(0)
        let token = try #require(try guesser.get("/signin").csrf)
        // A name each time: the per-name wait (`SignInBackoff`) is another bound, kept as it is.
        for guess in 1...5 {
            let answer = try guesser.post("/signin", [("csrf", token), ("name", "guessed-name-\(guess)"), ("password", "guess \(guess)")])
            #expect(answer.status == 401, "guess \(guess): \(answer)")
        }
        #expect(try guesser.post("/signin", [("csrf", token), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)]).status == 429)
        // The owner's phone: the same /64, another MAC, its own tries.
        let owner = browser(1)
        let ownerToken = try #require(try owner.get("/signin").csrf)
        let signedIn = try owner.post("/signin", [("csrf", ownerToken), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)])
        #expect(signedIn.status == 303, "\(signedIn)")
    }
}
