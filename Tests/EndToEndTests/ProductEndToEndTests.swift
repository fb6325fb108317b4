import Foundation
import Testing

/// The whole product through its real binaries: the `scrolloff` CLI changes the rules over the
/// control socket, and `dig` sees the helper's DNS answers follow (SPEC §4, §9, §13).
@Suite struct ProductEndToEndTests {
    /// Runs the CLI against this helper's control socket.
    func cli(_ server: Sinkhole, _ arguments: [String]) throws -> String {
        try run(Products.scrolloff, arguments + ["--socket", server.controlSocket])
    }

    /// The first A record and its TTL in a `dig +noall +answer` reply, or nil.
    func firstA(_ answer: String) -> (address: String, ttl: Int)? {
        for line in answer.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count >= 5, fields[3] == "A", let ttl = Int(fields[1]) { return (String(fields[4]), ttl) }
        }
        return nil
    }

    @Test func cli_block_use_and_stop_change_the_answers_of_the_running_helper() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let name = "www.instagram.com"

        let before = firstA(try dig(server.port, ["+noall", "+answer", name, "A"]))
        #expect(before?.address == "10.20.30.40", "forwarded while nothing is blocked")

        let blocked = try cli(server, ["block", "instagram", "--reason", "sleep before exams"])
        #expect(blocked.contains("Blocked instagram"), "\(blocked)")
        // The policy sits before the cache: the answer cached above must not leak through.
        let sunk = try dig(server.port, [name, "A"])
        #expect(sunk.contains("0.0.0.0") && sunk.contains("EDE: 15"), "\(sunk)")
        #expect(try firstA(dig(server.port, ["+noall", "+answer", name, "A"])).map { $0.ttl <= 10 } == true)
        #expect(try dig(server.port, ["+short", "i.instagram.com", "AAAA"]).contains("::"), "subdomains of a listed name")

        let refused = try cli(server, ["unblock", "instagram"])
        #expect(refused.contains("cooldown") && refused.contains("sleep before exams"), "\(refused)")

        // Spending the starter credit opens it at once, with TTLs capped at the time left.
        let opened = try cli(server, ["use", "instagram", "--for", "1m"])
        #expect(opened.contains("instagram"), "\(opened)")
        let open = try #require(firstA(try dig(server.port, ["+noall", "+answer", name, "A"])))
        #expect(open.address == "10.20.30.40")
        #expect(open.ttl <= 60, "a managed name's TTL never outlives the grant")

        // Credit is charged per whole second, so let the grant run for more than one.
        Thread.sleep(forTimeInterval: 1.5)
        // `stop` answers after the new rules are in force: the very next query is blocked again.
        _ = try cli(server, ["stop"])
        #expect(try firstA(dig(server.port, ["+noall", "+answer", name, "A"]))?.address == "0.0.0.0")

        let wallet = try cli(server, ["wallet", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(wallet.utf8)) as? [String: Any], "\(wallet)")
        let balance = try #require(object["balance_seconds"] as? Int)
        #expect(balance <= 119 && balance >= 117, "1.5 s of use charged from the 2 min starter credit: \(balance)")
    }
}
