import Foundation
import Testing

/// SIGKILL at arbitrary moments while credit is being spent and DNS is being answered: the SQLite
/// state stays consistent (ledger and wallet agree) and the helper starts again on it (SPEC §4, §10).
@Suite struct CrashEndToEndTests {
    /// A small deterministic generator, so a failing run can be replayed with the same sleeps.
    struct SeededRandom: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            // SplitMix64.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func ten_sigkills_while_spending_and_answering_leave_ledger_and_wallet_in_agreement() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        let blocked = try helper.cli(["block", "instagram"])
        #expect(blocked.exitCode == 0, "\(blocked)")
        var random = SeededRandom(state: 20261122)
        var opened = 0

        for round in 0..<10 {
            let use = try helper.cli(["use", "instagram", "--for", "1m"])
            // After the first round the grant from before the kill may still be open; both the new
            // grant and the refusal that names the open one are answers, a crash is not.
            #expect(use.exitCode == 0 || use.exitCode == 1, "round \(round): \(use)")
            if use.exitCode == 0 { opened += 1 }
            // DNS traffic while the helper dies: a burst of queries in the background.
            let burst = try Spawned("/usr/bin/dig", ["@127.0.0.1", "-p", "\(helper.port)", "+time=1", "+tries=1"]
                                        + Array(repeating: ["www.instagram.com", "A", "fwd.test", "A"], count: 20).flatMap { $0 },
                                    stdout: "/dev/null", stderr: "/dev/null")
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.6, using: &random))
            helper.stop(signal: SIGKILL)
            burst.wait()

            #expect(try sqlite(helper.database, "PRAGMA quick_check") == "ok", "round \(round)")
            let disagreeing = try sqlite(helper.database, """
                SELECT p.name, COALESCE((SELECT SUM(delta_seconds) FROM ledger l WHERE l.profile = p.name), 0),
                       COALESCE((SELECT SUM(remaining) FROM wallet_batches b WHERE b.profile = p.name), 0)
                FROM profiles p
                WHERE COALESCE((SELECT SUM(delta_seconds) FROM ledger l WHERE l.profile = p.name), 0)
                   != COALESCE((SELECT SUM(remaining) FROM wallet_batches b WHERE b.profile = p.name), 0)
                """)
            #expect(disagreeing.isEmpty, "round \(round): ledger sum vs wallet batches per profile: \(disagreeing)")

            try helper.restart()
            let wallet = try helper.cli(["wallet", "--json"])
            #expect(wallet.exitCode == 0, "round \(round): \(wallet)")
            let balance = try #require(try jsonObject(wallet.output)["balance_seconds"] as? Int, "\(wallet)")
            #expect((0...120).contains(balance), "round \(round): at most the starter credit: \(balance)")
        }
        // Not a vacuous agreement: credit was really spent and charged across the kills. A spend
        // killed before its first commit after `use` is charged nothing (SPEC §4: a spend ends where
        // the helper last ran), so one more runs for a second and is stopped.
        #expect(opened >= 1)
        #expect(try helper.cli(["use", "instagram", "--for", "1m"]).exitCode == 0)
        Thread.sleep(forTimeInterval: 1.5)
        // With the grant ended nothing changes the balance any more, so the one the CLI shows must be
        // the ledger's sum on disk.
        let stop = try helper.cli(["stop"])
        #expect(stop.exitCode == 0, "\(stop)")
        let wallet = try helper.cli(["wallet", "--json"])
        let shown = try #require(try jsonObject(wallet.output)["balance_seconds"] as? Int, "\(wallet)")
        helper.stop()
        #expect(try sqlite(helper.database, "SELECT SUM(delta_seconds) FROM ledger WHERE profile = 'default'") == "\(shown)")
        let spent = try sqlite(helper.database, "SELECT COUNT(*), COALESCE(SUM(delta_seconds), 0) FROM ledger WHERE reason = 'spend'")
        let fields = spent.split(separator: "|").compactMap { Int($0) }
        #expect(fields.count == 2 && fields[0] >= 1 && fields[1] < 0, "spend rows in the ledger: \(spent)")
    }
}
