import DNSWire
import DomainLists
import ScrollOffCore
import Testing
@testable import Sinkhole

/// The production policy: DomainLists matcher + ScrollOffCore snapshot behind `QueryPolicy`.
@Suite struct SnapshotPolicyTests {
    static let t0 = Instant(secondsSince1970: 1_800_000_000)
    /// Entries: 0 social (blocked), 1 news (open by a grant for 120 s), 2 games (no rule).
    static let catalog: [EntryID] = ["social", "news", "games"]

    static func policy(at now: Instant = t0, profiles: ClientProfiles = ClientProfiles(), secondProfile: Bool = false) throws -> SnapshotPolicy {
        var builder = MatcherBuilder()
        builder.add(try DomainName("social.test"), entry: DomainLists.EntryIndex(0))
        builder.add(try DomainName("news.test"), entry: DomainLists.EntryIndex(1))
        builder.add(try DomainName("games.test"), entry: DomainLists.EntryIndex(2))
        builder.allow(try DomainName("help.social.test"))
        let matcher = builder.build()
        let rules = ProfileRules(
            blocks: [
                Block(entry: "social", created: t0 - .hours(3), cooldownUntil: t0 - .hours(1)),
                Block(entry: "news", created: t0 - .hours(3), cooldownUntil: t0 - .hours(1)),
            ],
            grants: [Grant(id: 1, entry: "news", kind: .spend, start: t0 - .seconds(10), end: t0 + .seconds(120))])
        var all = [rules]
        if secondProfile { all.append(ProfileRules()) }
        let snapshot = EnforcementSnapshot(
            entrySets: matcher.entrySets.map { $0.map(\.rawValue) }, entries: catalog, profiles: all, builtAt: now)
        return SnapshotPolicy(matcher: matcher, snapshot: snapshot, profiles: profiles, now: { now })
    }

    static func decide(_ policy: SnapshotPolicy, _ name: String, client: ClientAddress = .unknown) throws -> PolicyDecision {
        policy.decide(lowercasedName: try DNSName(name).lowercased.wireBytes, type: .a, client: client)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var expected: PolicyDecision
        var testDescription: String { name }
    }

    @Test(arguments: [
        Case(name: "social.test", expected: .blocked(ttlCap: 10)),
        Case(name: "WWW.Social.Test", expected: .blocked(ttlCap: 10)),
        Case(name: "help.social.test", expected: .allowed),
        Case(name: "a.help.social.test", expected: .allowed),
        Case(name: "news.test", expected: .managed(ttlCap: 120)),
        Case(name: "games.test", expected: .allowed),
        Case(name: "other.test", expected: .allowed),
        Case(name: "notsocial.test", expected: .allowed),
    ])
    func decision(c: Case) throws {
        #expect(try Self.decide(try Self.policy(), c.name) == c.expected)
    }

    @Test func the_managed_cap_counts_down_with_the_clock() throws {
        let later = Self.t0 + .seconds(100)
        let policy = try Self.policy()
        let moved = SnapshotPolicy(matcher: policy.matcher, snapshot: policy.snapshot, now: { later })
        #expect(try Self.decide(moved, "news.test") == .managed(ttlCap: 20))
    }

    @Test func clients_in_a_cidr_get_their_own_profile() throws {
        let profiles = ClientProfiles([
            .init(address: .v4(0xC0A8_0100), prefixLength: 24, profile: 1),
            .init(address: .v6(high: 0x2001_0DB8_0000_0000, low: 0), prefixLength: 32, profile: 1),
        ])
        let policy = try Self.policy(profiles: profiles, secondProfile: true)
        #expect(try Self.decide(policy, "social.test", client: .v4(0xC0A8_0107)) == .allowed)
        #expect(try Self.decide(policy, "social.test", client: .v4(0xC0A8_0207)).isBlocked)
        #expect(try Self.decide(policy, "social.test", client: .v6(high: 0x2001_0DB8_1234_0000, low: 9)) == .allowed)
        #expect(try Self.decide(policy, "social.test", client: .v6(high: 0x2001_0DB9_0000_0000, low: 9)).isBlocked)
    }
}
