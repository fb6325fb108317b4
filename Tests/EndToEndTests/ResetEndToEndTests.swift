import Foundation
import Testing

/// `scrolloff-dns reset --wipe` (SPEC §12, §13) with the real binaries.
@Suite struct ResetEndToEndTests {
    @Test func reset_wipe_refuses_while_the_helper_runs_then_empties_the_database_once_it_is_stopped() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        let blocked = try helper.cli(["block", "instagram", "--reason", "evenings are mine"])
        #expect(blocked.exitCode == 0, "\(blocked)")
        let wipe = [Products.scrolloffDNS, "reset", "--wipe", "--state-dir", helper.stateDirectory,
                    "--control-socket", helper.controlSocket]

        let whileRunning = try runWithStatus("/usr/bin/env", wipe)
        #expect(whileRunning.exitCode != 0, "\(whileRunning)")
        #expect(whileRunning.output.contains("the helper is running"), "\(whileRunning)")
        #expect(try sqlite(helper.database, "SELECT COUNT(*) FROM blocks") != "0", "nothing deleted while it runs")

        helper.stop()
        let stopped = try runWithStatus("/usr/bin/env", wipe)
        #expect(stopped.exitCode == 0, "\(stopped)")
        #expect(stopped.output.contains("Wiped"), "\(stopped)")
        #expect(try sqlite(helper.database, "SELECT COUNT(*) FROM blocks") == "0")
        #expect(try sqlite(helper.database, "SELECT COUNT(*) FROM ledger") == "0")

        // The next start sets up afresh: instagram answers normally again and the starter credit is back.
        try helper.restart()
        let status = try helper.cli(["status", "--json"])
        #expect(status.exitCode == 0, "\(status)")
        let entries = try #require(try jsonObject(status.output)["entries"] as? [[String: Any]], "\(status)")
        #expect(!entries.contains { ($0["id"] as? String) == "instagram" && ($0["state"] as? String) == "blocked" }, "\(status)")
    }

    @Test func reset_without_wipe_is_a_usage_error_that_names_the_flag() throws {
        let outcome = try runWithStatus(Products.scrolloffDNS, ["reset", "--state-dir", NSTemporaryDirectory()])
        #expect(outcome.exitCode == 64, "\(outcome)")
        #expect(outcome.output.contains("--wipe"), "\(outcome)")
    }
}
