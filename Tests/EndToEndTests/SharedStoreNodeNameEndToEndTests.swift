import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing

/// Two real helpers given one node name (two machines both `raspberrypi`): the second is refused
/// at its start, saying what to do; the first, killed and started again at once, is not.
extension SharedStoreEndToEndTests {
    @Test func a_second_helper_with_the_same_node_name_is_refused_at_start_and_the_first_restarted_at_once_is_not() throws {
        let scratch = try Scratch()
        let db = try TestPostgres()
        defer { db.stop() }
        let upstream = try Dnsmasq(scratch: scratch)
        var first = try HouseholdNode("pg-pi", url: db.socketURL, scratch: scratch, upstream: upstream.port)
        defer { first.stop() }

        // Another machine's helper: its own state folder, the same name.
        let config = try scratch.file("pg-pi-other.toml", """
            [store]
            backend = "postgresql"
            url = "\(db.socketURL)"
            node = "pg-pi"

            """)
        let other = try HelperLaunch(executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)],
                                     stateDirectory: "\(scratch.path)/pg-pi-other-state", controlSocket: "\(scratch.path)/pg-pi-other.sock",
                                     config: config, wrappers: [.timeout(seconds: 30)], environment: ["TZ": "UTC"]).outcome()
        #expect(other.exitCode != 0 && other.exitCode != 124, "\(other)")
        #expect(other.output.contains("node name \"pg-pi\" was heartbeated") && other.output.contains("s ago by another helper"), "\(other)")
        #expect(other.output.contains("set `[store] node = \"...\"` to a distinct name on each machine"), "\(other)")

        // The first helper dies and is started again at once on its state folder: its own name.
        first.stop(signal: SIGKILL)
        first = try HouseholdNode("pg-pi", url: db.socketURL, scratch: scratch, upstream: upstream.port, label: "pg-pi-again")
        let blocked = try first.cli(["block", "tiktok"])
        #expect(blocked.exitCode == 0, "\(blocked)")
    }
}
