@testable import Enforcement
import Foundation
@testable import Helper
import ScrollOffCore
import Synchronization
import Testing

/// SPEC §11 "New addresses", at the decision: a device whose MAC the kernel does
/// not know yet (its first query from a new address) is answered by the strictest profile that
/// could apply, never by the unknown devices' profile; with a neighbour table the test holds.
@Suite struct NewAddressRoutingTests {
    static let kidMAC: UInt64 = 0x02_5c_00_00_31_0a
    static let guestMAC: UInt64 = 0x02_5c_00_00_31_0b

    /// The neighbour table the test holds, and how often the cache read it.
    final class Kernel: Sendable {
        let table: Mutex<[ClientIP: UInt64]>
        let reads = Mutex(0)
        init(_ table: [ClientIP: UInt64]) { self.table = Mutex(table) }
        var readCount: Int { reads.withLock { $0 } }
    }

    /// The engine's enforcement at Wednesday 12:00 (profiles `default` and `kids`, the kids' MAC
    /// blocked from instagram), routed through a neighbour cache over `table`.
    static func enforcement(_ kernel: Kernel, budget: Int = 1000) async throws -> (Enforcement, Instant) {
        let time = TestTimeSource(wall: Fixture.noon, bootNanoseconds: 1_000_000_000_000_000_000)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.addProfile("kids", clients: [MACAddress.describe(kidMAC)])
        _ = try await engine.block(["instagram"], reason: "less scrolling", profile: "kids")
        let published = engine.box.enforcement
        #expect(published.profileNames == ["default", "kids"])
        let neighbours = NeighbourCache(maximumAge: .seconds(3600), missReadsPerSecond: budget) {
            kernel.reads.withLock { $0 += 1 }
            return kernel.table.withLock { $0 }
        }
        let router = ClientRouter(networks: [[], []], macs: [[], [kidMAC]], neighbours: neighbours)
        return (Enforcement(tables: published.tables, snapshot: published.snapshot, states: published.states, router: router,
                            profileNames: published.profileNames, clock: published.clock), Fixture.noon)
    }

    static func decision(_ e: Enforcement, _ name: String, from client: String, at now: Instant) -> EnforcementDecision {
        Fixture.wire(name).withUnsafeBytes { e.decide(wire: $0, client: ClientIP(client)!, now: now) }
    }

    @Test func a_managed_name_from_an_address_the_kernel_does_not_know_yet_is_answered_blocked() async throws {
        let kernel = Kernel([ClientIP("192.168.1.10")!: Self.kidMAC, ClientIP("fd00::10")!: Self.kidMAC])
        let (e, now) = try await Self.enforcement(kernel)
        #expect(Self.decision(e, "www.instagram.com", from: "192.168.1.10", at: now).blocked)
        // A new IPv4 and a new IPv6 address the table does not hold: the kid's device, or any other.
        for client in ["192.168.1.77", "fd00::77", "fe80::5c:ff:fe00:310a", "::ffff:192.168.1.78"] {
            let d = Self.decision(e, "www.instagram.com", from: client, at: now)
            #expect(d.blocked && d.ttlCap <= 10, "\(client): \(d)")
        }
        // A name no profile manages is answered as ever.
        #expect(!Self.decision(e, "www.example.com", from: "192.168.1.79", at: now).blocked)
    }

    @Test func once_the_kernel_knows_the_address_the_device_follows_its_own_profile() async throws {
        let kernel = Kernel([:])
        let (e, now) = try await Self.enforcement(kernel)
        #expect(Self.decision(e, "www.instagram.com", from: "192.168.1.20", at: now).blocked)
        // The reply made the kernel learn it: a guest's device, in no MAC profile, is open again…
        kernel.table.withLock { $0 = [ClientIP("192.168.1.20")!: Self.guestMAC, ClientIP("192.168.1.21")!: Self.kidMAC] }
        #expect(!Self.decision(e, "www.instagram.com", from: "192.168.1.20", at: now).blocked)
        // …and the kid's stays blocked.
        #expect(Self.decision(e, "www.instagram.com", from: "192.168.1.21", at: now).blocked)
    }

    @Test func a_flood_of_new_addresses_past_the_read_budget_is_never_answered_open() async throws {
        let kernel = Kernel([ClientIP("192.168.1.30")!: Self.guestMAC])
        let (e, now) = try await Self.enforcement(kernel, budget: 2)
        // The guest is known before the flood (one read).
        #expect(!Self.decision(e, "www.instagram.com", from: "192.168.1.30", at: now).blocked)
        var open: [String] = []
        for i in 0..<2000 {
            let client = i % 2 == 0 ? "10.9.\(i / 256 % 256).\(i % 256)" : "fd00::9:\(String(i, radix: 16))"
            if !Self.decision(e, "www.instagram.com", from: client, at: now).blocked { open.append(client) }
        }
        #expect(open.isEmpty, "\(open.count) answered open, such as \(open.prefix(5))")
        // The flood cost a bounded number of table reads, and the known guest is still answered from the map.
        #expect(kernel.readCount <= 5, "\(kernel.readCount) reads")
        #expect(!Self.decision(e, "www.instagram.com", from: "192.168.1.30", at: now).blocked)
    }

    @Test(arguments: [("::ffff:10.0.0.5", "10.0.0.5/32"), ("::ffff:10.0.0.0/120", "10.0.0.0/24"), ("::FFFF:a00:0/104", "10.0.0.0/8"),
                      ("0:0:0:0:0:ffff:10.1.2.3/128", "10.1.2.3/32")])
    func an_ipv4_mapped_client_network_is_its_ipv4_network(text: String, ipv4: String) throws {
        #expect(try ClientNetwork(parsing: text).description == ipv4)
        // Routed as the router places a mapped client: by its IPv4 address, in either form.
        let router = ClientRouter(networks: [[], [try ClientNetwork(parsing: text)]])
        let inside = try ClientNetwork(parsing: ipv4).first
        #expect(router.profile(for: inside) == 1)
        if case .v4(let a) = inside { #expect(router.profile(for: .v6(high: 0, low: 0xFFFF_0000_0000 | UInt64(a))) == 1) }
    }
}
