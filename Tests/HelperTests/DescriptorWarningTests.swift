@testable import Config
@testable import ControlServer
@testable import Helper
@testable import ServiceKit
import Testing

/// The first start as a normal user (a soft limit of 1024, a few descriptors
/// inherited) said the control connections were "lowered" from 64 to 65, with a limit equal to
/// the need. Fitting never raises a part, and the warning says only what changed, once.
@Suite struct DescriptorWarningTests {
    /// Every limit from just enough for the smallest shares up to the need, with 0 to 6 descriptors
    /// inherited: no part is given more than configured.
    @Test func fitting_never_gives_a_part_more_than_configured() throws {
        let configuration = DescriptorBudgetTests.configuration(metrics: true)
        let asked = DescriptorBudget.configured(configuration)
        let needed = DescriptorBudget.needed(configuration)
        for inherited in 0...6 {
            for limit in (needed - 120)...(needed + 8) {
                let shares = try DescriptorBudget.fit(configuration, limit: limit, inherited: inherited)
                #expect(shares.tcp.maximumConnections <= asked.tcp.maximumConnections, "limit \(limit), inherited \(inherited)")
                #expect(shares.control.total <= asked.control.total, "limit \(limit), inherited \(inherited): \(shares.control)")
                #expect(shares.control.perUser <= asked.control.perUser, "limit \(limit), inherited \(inherited)")
                #expect(shares.webConnections <= asked.webConnections && shares.upstreamTCP <= asked.upstreamTCP)
            }
        }
    }

    /// The soft limit is raised to what the limits need with the inherited descriptors counted, so
    /// a hard limit with room leaves nothing to lower and nothing to say.
    @Test func a_hard_limit_with_room_raises_the_soft_one_far_enough_and_says_nothing() throws {
        let configuration = DescriptorBudgetTests.configuration(metrics: true)
        let needed = DescriptorBudget.needed(configuration)
        let plan = try DescriptorBudget.plan(configuration, soft: 256, hard: 65_536, inherited: 3)
        #expect(plan.raiseTo == needed + 3)
        #expect(plan.shares == DescriptorBudget.configured(configuration))
        #expect(plan.warning == nil)
    }

    /// When the hard limit is short, one sentence with the numbers: the limit, what is needed, and
    /// only the parts that changed, each lowered.
    @Test func a_short_limit_is_said_once_with_only_what_was_lowered() throws {
        let configuration = DescriptorBudgetTests.configuration(metrics: true)
        let needed = DescriptorBudget.needed(configuration)
        let plan = try DescriptorBudget.plan(configuration, soft: needed - 10, hard: needed - 10, inherited: 2)
        let warning = try #require(plan.warning)
        #expect(warning.contains("limit (\(needed - 10))") && warning.contains("\(needed + 2)"), "\(warning)")
        #expect(!warning.contains("64 -> 65") && !warning.contains("64 → 65"), "\(warning)")
        for (key, value) in plan.metadata {
            let parts = value.split(separator: " ")
            if parts.count == 3, let from = Int(parts[0]), let to = Int(parts[2]) {
                #expect(to < from, "\(key): \(value)")
            }
        }
    }
}
