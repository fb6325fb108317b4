import Enforcement
import Synchronization
import Testing

/// SPEC §9 MAC clients and `unknown_devices` at the router, with a neighbour table the test holds.
@Suite struct DeviceRoutingTests {
    static let kidMAC: UInt64 = 0x02_5c_00_00_77_0a

    @Test(arguments: [("02:5c:00:00:77:0a", true), ("02-5C-00-00-77-0A", true), ("2:5c:0:0:77:a", false), ("02:5c:00:00:77", false),
                      ("02:5c:00:00:77:0g", false), ("10.0.0.1", false)])
    func mac_addresses_are_six_pairs_of_hex_digits(text: String, valid: Bool) {
        #expect((MACAddress.parse(text) == Self.kidMAC) == valid)
        if valid { #expect(MACAddress.describe(MACAddress.parse(text)!) == "02:5c:00:00:77:0a") }
    }

    @Test func a_mac_profile_follows_the_device_to_any_address_and_wins_over_networks() throws {
        let table = Mutex<[ClientIP: UInt64]>([ClientIP("10.0.0.10")!: Self.kidMAC])
        let reads = Mutex(0)
        let neighbours = NeighbourCache(maximumAge: .seconds(3600), missReadsPerSecond: 1000) {
            reads.withLock { $0 += 1 }
            return table.withLock { $0 }
        }
        let router = ClientRouter(networks: [[], [], [try ClientNetwork(parsing: "10.0.0.0/24")]], macs: [[], [Self.kidMAC], []],
                                  neighbours: neighbours)
        #expect(router.profile(for: ClientIP("10.0.0.10")!) == 1)
        #expect(router.profile(for: ClientIP("10.0.0.11")!) == 2)
        // The device moves: the first query from the new address reads the table again and finds it.
        table.withLock { $0 = [ClientIP("10.0.0.99")!: Self.kidMAC] }
        #expect(router.profile(for: ClientIP("10.0.0.99")!) == 1)
        // Loopback never reads the table.
        let before = reads.withLock { $0 }
        #expect(router.profile(for: ClientIP("127.0.0.1")!) == 0)
        #expect(reads.withLock { $0 } == before)
    }

    @Test func a_flood_of_misses_reads_the_table_at_most_the_budget() {
        let reads = Mutex(0)
        let neighbours = NeighbourCache(maximumAge: .seconds(3600), missReadsPerSecond: 2) {
            reads.withLock { $0 += 1 }
            return [:]
        }
        for last in 1...200 { _ = neighbours.mac(for: ClientIP("10.1.\(last / 250).\(last % 250)")!) }
        // Two at once, then two a second: the loop takes far less than a second.
        #expect((2...4).contains(reads.withLock { $0 }), "\(reads.withLock { $0 })")
    }

    @Test func unknown_devices_follow_the_configured_profile_but_loopback_stays_default() throws {
        let router = ClientRouter(networks: [[], [try ClientNetwork(parsing: "192.0.2.0/24")], []], unknownProfile: 2)
        #expect(router.profile(for: ClientIP("192.0.2.5")!) == 1)
        #expect(router.profile(for: ClientIP("198.51.100.7")!) == 2)
        #expect(router.profile(for: ClientIP("fd00::7")!) == 2)
        #expect(router.profile(for: ClientIP("127.0.0.1")!) == 0)
        #expect(router.profile(for: ClientIP("::1")!) == 0)
    }

    @Test func the_kernel_neighbour_table_can_be_read_here() {
        // Loopback has no neighbours, but the dump itself must succeed (an empty map is fine).
        #expect(NeighbourCache(maximumAge: .seconds(1), missReadsPerSecond: 10).mac(for: ClientIP("127.0.0.1")!) == nil)
    }
}
