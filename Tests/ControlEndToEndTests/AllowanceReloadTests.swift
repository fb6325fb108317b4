import Config
import Engine
import Foundation
import Helper
import ScrollOffCore
import Testing

/// `[[allowances]]` through the real reloader (SPEC §4a, §13): the file's allowance is in force at
/// start, a reload that lowers it applies at once and is reported as `allowances`, and one that
/// raises it again inside the cooldown the lowering started is held back with when it applies.
@Suite struct AllowanceReloadTests {
    static func youtube(_ seconds: Int64) -> [ConfiguredAllowance] {
        [ConfiguredAllowance(profile: "default", entries: ["youtube"], secondsByWeekday: Array(repeating: seconds, count: 7))]
    }

    static func todaySeconds(_ helper: ReloadableHelper) async throws -> Int? {
        let listed = try await cli(["allowance", "list", "--json"], socket: helper.socket)
        let object = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
        let first = (object?["allowances"] as? [[String: Any]])?.first { $0["entries"] as? [String] == ["youtube"] }
        return first?["today_seconds"] as? Int
    }

    @Test func a_reload_lowers_the_files_allowance_at_once_and_holds_a_raise_back_inside_its_cooldown() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await ReloadableHelper(upstream: upstream) { c, _ in c.allowances = Self.youtube(3600) }
        defer { Task { await helper.stop() } }
        #expect(try await Self.todaySeconds(helper) == 3600, "the file's allowance is in force from the start")

        let lowered = try #require(await helper.reload { c in c.allowances = Self.youtube(1800) })
        #expect(lowered.failure == nil && lowered.applied == ["allowances"], "\(lowered)")
        #expect(try await Self.todaySeconds(helper) == 1800)

        let raised = try #require(await helper.reload { c in c.allowances = Self.youtube(3600) })
        #expect(raised.failure == nil && !raised.applied.contains("allowances"), "\(raised)")
        #expect(raised.heldBack.first?.contains("raising the daily allowance for youtube waits until") == true, "\(raised.heldBack)")
        #expect(try await Self.todaySeconds(helper) == 1800, "held back while the cooldown runs")
    }
}
