import ControlAPI
import DNSWire
@testable import Enforcement
@testable import Engine
import Foundation
@testable import Helper
import ScrollOffCore
import Sinkhole
import Testing

/// `EnforcementPolicy`, the one policy the resolver chain asks per query, driven directly: each
/// entry state × TTL cap, strict curfew, allow beats block (SPEC §1, §2, §9), and answers that
/// change at window edges and grant ends from the same published enforcement, with no rebuild.
@Suite struct EnforcementPolicyTests {
    /// Engine at Wednesday 12:00 UTC: instagram blocked around the clock; tiktok in a curfew from
    /// 12:05; reddit blocked and opened by a 120 s spend (the starter credit); youtube in a block
    /// window from 13:00; a profile `kids` (10.0.0.0/8) in a strict curfew now.
    static func engine() async throws -> (HelperEngine, TestTimeSource) {
        // `EnforcementPolicy` reads the real boot clock: a test boot clock far past any real uptime
        // keeps its "now" at 12:00 (at 5,000 s it ran on once the machine had been up 83 min).
        let time = TestTimeSource(wall: Fixture.noon, bootNanoseconds: 1_000_000_000_000_000_000)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram", "reddit"], reason: "less scrolling")
        _ = try await engine.addSchedule(ScheduleRequest(name: "bed", from: "12:05", to: "14:00", curfew: true, entries: ["tiktok"]))
        _ = try await engine.addSchedule(ScheduleRequest(name: "work", from: "13:00", to: "17:00", entries: ["youtube"]))
        _ = try await engine.addProfile("kids", clients: ["10.0.0.0/8"])
        _ = try await engine.addSchedule(ScheduleRequest(name: "lights-out", from: "11:00", to: "15:00", curfew: true, strict: true, entries: []),
                                         profile: "kids")
        _ = try await engine.use("reddit")
        return (engine, time)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var name: String
        var client = "127.0.0.1"
        /// Seconds after 12:00 at which the query is asked (the enforcement is the one published at 12:00).
        var after: Int64 = 0
        var expected: PolicyDecision
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "blocked around the clock: blocked, TTL ≤ 10 s", name: "www.instagram.com", expected: .blocked(ttlCap: 10)),
        Case(label: "curfew in 300 s: managed, TTL 300 s", name: "www.tiktok.com", expected: .managed(ttlCap: 300)),
        Case(label: "curfew counts down: 200 s left", name: "www.tiktok.com", after: 100, expected: .managed(ttlCap: 200)),
        Case(label: "curfew edge passed without a rebuild: blocked", name: "www.tiktok.com", after: 300, expected: .blocked(ttlCap: 10)),
        Case(label: "spend open for 120 s: managed, TTL 120 s", name: "www.reddit.com", expected: .managed(ttlCap: 120)),
        Case(label: "spend end passed without a rebuild: blocked", name: "www.reddit.com", after: 120, expected: .blocked(ttlCap: 10)),
        Case(label: "block window in an hour: managed, TTL 3600 s", name: "www.youtube.com", expected: .managed(ttlCap: 3600)),
        Case(label: "block window started: blocked", name: "www.youtube.com", after: 3600, expected: .blocked(ttlCap: 10)),
        Case(label: "an unruled name: allowed", name: "www.example.com", expected: .allowed),
        Case(label: "strict curfew: every name blocked", name: "www.example.com", client: "10.1.2.3", expected: .blocked(ttlCap: 10)),
        Case(label: "strict curfew ends at 15:00: allowed", name: "www.example.com", client: "10.1.2.3", after: 3 * 3600, expected: .allowed),
        Case(label: "allow beats a strict curfew", name: "pool.ntp.org", client: "10.1.2.3", expected: .allowed),
        Case(label: "another profile's strict curfew does not touch the default", name: "www.wikipedia.org", expected: .allowed),
    ]

    @Test(arguments: cases)
    func policy_table(c: Case) async throws {
        let (engine, _) = try await Self.engine()
        let enforcement = engine.box.enforcement
        let policy = EnforcementPolicy(enforcement: enforcement, urges: engine.urges, wakeTarget: engine.wakeTarget)
        let name = try DNSName(c.name).lowercased.wireBytes
        let client = ClientIP(c.client) ?? .unknown
        // The test clock stands still at 12:00; a query `after` seconds later uses the same enforcement.
        let now = Fixture.noon + .seconds(c.after)
        let decision = name.withUnsafeBytes { enforcement.decide(wire: $0, client: client, now: now) }
        let answer: PolicyDecision = decision.blocked ? .blocked(ttlCap: decision.ttlCap)
            : decision.managed ? .managed(ttlCap: decision.ttlCap) : .allowed
        #expect(answer == c.expected)
        if c.after == 0 { #expect(policy.decide(lowercasedName: name, type: .a, client: client) == c.expected) }
    }
}
