@testable import Enforcement
import Synchronization
import Testing

/// SPEC §11: overlapping clients are said, with the profile that wins; the neighbour cache's
/// bounds and which clients it never looks up.
@Suite struct ClientOverlapTests {
    @Test func a_network_inside_another_profiles_network_is_said_with_the_longer_prefix_winning() {
        let lines = ClientOverlaps.describe([("default", []), ("adults", ["10.0.0.0/8"]), ("kids", ["10.1.0.0/16", "fd00:1::/64"]),
                                             ("tv", ["fd00::/16"])])
        #expect(lines == [
            "10.1.0.0/16 (profile kids) lies inside 10.0.0.0/8 (profile adults): clients in 10.1.0.0/16 follow kids, since the longer prefix wins",
            "fd00:1:0:0:0:0:0:0/64 (profile kids) lies inside fd00:0:0:0:0:0:0:0/16 (profile tv): clients in fd00:1:0:0:0:0:0:0/64 follow kids, since the longer prefix wins",
        ])
    }

    @Test func an_ipv4_mapped_address_beside_its_ipv4_form_is_one_client_and_the_first_profile_wins() {
        let lines = ClientOverlaps.describe([("default", []), ("a", ["10.0.0.5"]), ("b", ["::ffff:10.0.0.5"])])
        #expect(lines == ["10.0.0.5/32 is a client of profiles a and b: it follows a, the first in order; remove it from one of them"])
        // And the router agrees.
        let router = ClientRouter(networks: [[], [try! ClientNetwork(parsing: "10.0.0.5")], [try! ClientNetwork(parsing: "::ffff:10.0.0.5")]])
        #expect(router.profile(for: ClientIP("10.0.0.5")!) == 1)
        #expect(router.profile(for: ClientIP("::ffff:10.0.0.5")!) == 1)
    }

    @Test func macs_are_said_to_win_over_networks_and_a_mac_in_two_profiles_names_the_winner() {
        let lines = ClientOverlaps.describe([("default", []), ("a", ["aa:bb:cc:dd:ee:ff"]), ("b", ["AA-BB-CC-DD-EE-FF", "10.0.0.0/24"])])
        #expect(lines == [
            "aa:bb:cc:dd:ee:ff is a client of profiles a and b: it follows a, the first in order; remove it from the others",
            "a device named by its MAC (profile a, b) follows that profile whatever address it takes, even inside another profile's network",
        ])
    }

    @Test func profiles_that_do_not_overlap_say_nothing() {
        #expect(ClientOverlaps.describe([("default", []), ("a", ["10.0.0.0/24", "10.0.0.0/25"]), ("b", ["10.0.1.0/24", "fd00::/8"])]).isEmpty)
    }

    @Test func the_neighbour_map_keeps_at_most_its_bound_however_large_the_kernels_table() {
        let huge = Dictionary(uniqueKeysWithValues: (0..<50_000).map { (ClientIP.v4(0x0A00_0000 | UInt32($0)), UInt64($0) | 0x0200_0000_0000) })
        let neighbours = NeighbourCache(maximumAge: .seconds(3600), missReadsPerSecond: 10, maximumEntries: 1000) { huge }
        let lookups = (0..<2000).map { neighbours.lookup(.v4(0x0A00_0000 | UInt32($0))) }
        #expect(neighbours.count <= 1000)
        // What the bound leaves out is unresolved (answered strictly), never a wrong MAC.
        for (i, lookup) in lookups.enumerated() {
            if case .mac(let mac) = lookup { #expect(mac == UInt64(i) | 0x0200_0000_0000) } else { #expect(lookup == .unresolved) }
        }
    }

    @Test func clients_off_this_machines_links_and_its_own_addresses_are_placed_by_address_without_a_table_read() {
        let reads = Mutex(0)
        let links = LocalLinks(networks: [try! ClientNetwork(parsing: "192.168.1.0/24"), try! ClientNetwork(parsing: "fd00:1::/64")],
                               own: [ClientIP("192.168.1.1")!])
        let neighbours = NeighbourCache(maximumAge: .seconds(3600), missReadsPerSecond: 1000, maximumEntries: 100, reader: {
            reads.withLock { $0 += 1 }
            return [:]
        }, linkReader: { links })
        // The first lookup reads both; a device on the link the table does not know is unresolved.
        #expect(neighbours.lookup(ClientIP("192.168.1.50")!) == .unresolved)
        #expect(neighbours.lookup(ClientIP("fd00:1::50")!) == .unresolved)
        let before = reads.withLock { $0 }
        // Behind a router, on no link of this machine, or the machine itself: by address, no read.
        for client in ["10.8.0.2", "fd00:2::7", "192.168.1.1", "127.0.0.5", "::1"] {
            #expect(neighbours.lookup(ClientIP(client)!) == .notANeighbour, "\(client)")
        }
        #expect(reads.withLock { $0 } == before)
        let router = ClientRouter(networks: [[], [try! ClientNetwork(parsing: "10.8.0.0/16")]], macs: [[], [0x02_5c_00_00_31_0a]],
                                  neighbours: neighbours)
        #expect(router.route(for: ClientIP("10.8.0.2")!) == .profile(1))
        #expect(router.route(for: ClientIP("192.168.1.51")!) == .unresolved(0))
    }

    @Test func this_machines_links_can_be_read_here() throws {
        let links = try #require(LocalLinks.read())
        #expect(links.own.contains(ClientIP("127.0.0.1")!))
        #expect(!links.isNeighbour(ClientIP("127.0.0.1")!))
    }
}
