@testable import Config
@testable import ControlServer
@testable import Helper
@testable import ServiceKit
import Sinkhole
import Testing

/// The connection limits fitted to the descriptor limit (SPEC §9): running out of descriptors
/// aborts the process (libdispatch), so a flood must meet a cap below the limit.
@Suite struct DescriptorBudgetTests {
    static func configuration(web: Bool = true, metrics: Bool = false, loops: Int = 2) -> HelperConfiguration {
        var configuration = HelperConfiguration(
            paths: RuntimePaths.defaults(isRoot: false, environment: [:]), listen: [], upstreams: [], eventLoops: loops)
        configuration.webListen = web ? HostPort(host: "127.0.0.1", port: 5381) : nil
        configuration.metricsListen = metrics ? HostPort(host: "127.0.0.1", port: 9153) : nil
        return configuration
    }

    static func total(_ shares: DescriptorShares) -> Int {
        shares.tcp.maximumConnections + shares.control.descriptors + shares.webConnections + shares.upstreamTCP
    }

    @Test func the_defaults_fit_the_units_limit_unchanged() throws {
        let configuration = Self.configuration(metrics: true)
        #expect(try DescriptorBudget.fit(configuration, limit: 65_536) == DescriptorBudget.configured(configuration))
        // Exactly what they need fits too; one less does not.
        let needed = DescriptorBudget.needed(configuration)
        #expect(try DescriptorBudget.fit(configuration, limit: needed) == DescriptorBudget.configured(configuration))
        #expect(try DescriptorBudget.fit(configuration, limit: needed - 1) != DescriptorBudget.configured(configuration))
    }

    @Test(arguments: [240, 300, 1024])
    func limits_above_the_descriptor_limit_are_lowered_to_leave_the_kept_descriptors_free(limit: Int) throws {
        var configuration = Self.configuration(metrics: true)
        configuration.tcp.maximumConnections = 4096
        configuration.tcp.maximumConnectionsPerClient = 4096
        configuration.control = ControlConnectionLimits(total: 4096, perUser: 4096)
        let shares = try DescriptorBudget.fit(configuration, limit: limit)
        #expect(Self.total(shares) + DescriptorBudget.kept(configuration) <= limit)
        // Every part keeps at least its smallest share, and no per-client cap exceeds its total.
        #expect(shares.tcp.maximumConnections >= 4 && shares.control.descriptors >= 6 && shares.control.total >= 2 && shares.webConnections >= 4 && shares.upstreamTCP >= 16)
        #expect(shares.tcp.maximumConnectionsPerClient <= shares.tcp.maximumConnections)
        #expect(shares.control.perUser <= shares.control.total)
        // Root's own share (outside the total) is counted: it is two users' worth.
        #expect(shares.control.descriptors == shares.control.total + 2 * shares.control.perUser)
        #expect(shares.webConnectionsPerClient <= shares.webConnections)
        #expect(shares.tcp.maximumInFlightPerClient == 128)
        // What was lowered was lowered in proportion: TCP asked for the most, so it keeps the most.
        #expect(shares.tcp.maximumConnections >= shares.webConnections)
        // Nothing is wasted: at most one descriptor per part is lost to rounding.
        #expect(Self.total(shares) + DescriptorBudget.kept(configuration) >= limit - 4)
    }

    @Test func the_household_page_off_gives_its_share_to_the_others() throws {
        let on = try DescriptorBudget.fit(Self.configuration(web: true), limit: 400)
        let off = try DescriptorBudget.fit(Self.configuration(web: false), limit: 400)
        #expect(off.webConnections == 0 && off.webConnectionsPerClient == 0)
        #expect(off.tcp.maximumConnections > on.tcp.maximumConnections)
    }

    @Test func a_limit_too_low_for_the_smallest_shares_stops_the_start_and_says_what_to_raise() {
        let configuration = Self.configuration()
        let smallest = DescriptorBudget.kept(configuration) + 4 + 6 + 4 + 16
        #expect(smallest < 200, "a helper with two threads and the page on should start with 200 descriptors")
        #expect(throws: Never.self) { try DescriptorBudget.fit(configuration, limit: smallest) }
        #expect {
            try DescriptorBudget.fit(configuration, limit: smallest - 1)
        } throws: { error in
            let text = "\(error)"
            return text.contains("(\(smallest - 1))") && text.contains("at least \(smallest)") && text.contains("LimitNOFILE")
        }
    }
}
