import Foundation
import TestSupport
import Testing

/// SPEC §3, the last hole: a helper restarted (or killed and restarted) while its state disk is
/// still full exited at the start's first write, and the household lost DNS altogether. The rules
/// load fine from a full disk, so the helper starts and enforces them; the start's bookkeeping waits
/// and is written once space is back.
@Suite struct FullDiskStartEndToEndTests {
    static let instagram = "www.instagram.com"

    @Test func killed_and_restarted_on_a_full_state_disk_the_helper_serves_dns_and_the_books_catch_up() throws {
        let scratch = try Scratch()
        let disk = try SmallDisk(at: "\(scratch.path)/state")
        defer { disk.unmount() }
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }

        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")
        let before = try jsonObject(try helper.cli(["wallet", "--json"]).output)["balance_seconds"] as? Int

        helper.stop(signal: SIGKILL)
        try disk.fill()
        try helper.restart()

        // Started: the blocked name stays blocked, everything else is forwarded.
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")
        #expect(try shortA(helper.port, "fwd.test") == "10.1.2.3")
        let failing = try Poll.until(seconds: 10) { helper.child.stderr.contains("cannot write the state") }
        #expect(failing, "\(helper.child.stderr)")
        let doctor = try helper.cli(["doctor", "--json"])
        #expect(doctor.output.contains("state writes failing for"), "\(doctor)")

        // Space comes back: the start's bookkeeping is written, once, and the downtime earned nothing.
        disk.free()
        let recovered = try Poll.until(seconds: 20) { helper.child.stderr.contains("state writes succeed again") }
        #expect(recovered, "\(helper.child.stderr)")
        let after = try helper.cli(["doctor", "--json"])
        #expect(!after.output.contains("state writes failing"), "\(after)")
        let wallet = try jsonObject(try helper.cli(["wallet", "--json"]).output)["balance_seconds"] as? Int
        #expect(wallet == before, "balance \(String(describing: before)) before the kill, \(String(describing: wallet)) after")
        #expect(try sqlite(helper.database, "SELECT SUM(delta_seconds) FROM ledger") == wallet.map(String.init))
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")

        // A later restart on a healthy disk finds the books consistent.
        try helper.restart(signal: SIGKILL)
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")
        let again = try jsonObject(try helper.cli(["wallet", "--json"]).output)["balance_seconds"] as? Int
        #expect(again == before)
    }

    /// `scrolloff stop` was refused while the disk was full, so the spend charged on until space came
    /// back. Ending a spend only stops charging: it holds at once and the ledger records it later.
    @Test func stop_on_a_full_state_disk_closes_the_spend_at_once_and_the_ledger_charges_only_up_to_it() throws {
        let scratch = try Scratch()
        let disk = try SmallDisk(at: "\(scratch.path)/state")
        defer { disk.unmount() }
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }

        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        #expect(try helper.cli(["use", "instagram"]).exitCode == 0)
        #expect(try shortA(helper.port, Self.instagram) == "10.20.30.40")
        try disk.fill()
        usleep(2_000_000)

        let stop = try helper.cli(["stop", "--json"])
        #expect(stop.exitCode == 0, "\(stop)")
        let balance = try #require(try jsonObject(stop.output)["balance_seconds"] as? Int, "\(stop)")
        #expect(balance < 120 && balance > 100, "\(stop)")
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")

        // Three more seconds of full disk charge nothing; then the books catch up to the stop.
        usleep(3_000_000)
        disk.free()
        let recovered = try Poll.until(seconds: 20) { helper.child.stderr.contains("state writes succeed again") }
        #expect(recovered, "\(helper.child.stderr)")
        let wallet = try jsonObject(try helper.cli(["wallet", "--json"]).output)["balance_seconds"] as? Int
        #expect(wallet == balance)
        #expect(try sqlite(helper.database, "SELECT SUM(delta_seconds) FROM ledger") == String(balance))
        #expect(try sqlite(helper.database, "SELECT COUNT(*) FROM grants WHERE end_reason = 'stopped'") == "1")
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")
    }

    /// After a clean stop SQLite's `-shm` file has no pages (or is gone), and on a full disk it cannot
    /// be given its first ones, so nothing can be read: the start stays fatal, but says the disk is full and what
    /// to do instead of "disk I/O error".
    @Test func stopped_cleanly_then_started_on_a_full_state_disk_the_helper_says_the_disk_is_full() throws {
        let scratch = try Scratch()
        let disk = try SmallDisk(at: "\(scratch.path)/state")
        defer { disk.unmount() }
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        helper.stop()
        try disk.fill()

        let start = try HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)], stateDirectory: helper.stateDirectory,
            controlSocket: helper.controlSocket, wrappers: [.timeout(seconds: 30)]
        ).outcome()
        #expect(start.exitCode != 0 && start.exitCode != 124, "\(start)")
        #expect(start.output.contains("is full; free space"), "\(start)")

        // Space comes back: the same state starts and enforces.
        disk.free()
        try helper.restart()
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")
        helper.stop()
    }
}
