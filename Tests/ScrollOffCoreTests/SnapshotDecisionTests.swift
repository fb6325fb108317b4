import Testing
import ScrollOffCore

/// The hot-path decision table (SPEC §9 TTLs, §2 strict curfew).
@Suite struct SnapshotDecisionTests {
    static let zone = "Europe/Berlin"
    static func at(_ text: String) -> Instant { RulesTime.local(text, zone) }
    static let now = at("2026-11-23 22:55")

    /// Entry indices: 0 instagram (blocked around the clock), 1 tiktok (curfew from 23:00),
    /// 2 reddit (blocked, opened by a grant until 23:02), 3 youtube (no rule).
    static let catalog: [EntryID] = ["instagram", "tiktok", "reddit", "youtube"]
    /// Set ids: 0 none, 1 {instagram}, 2 {tiktok}, 3 {reddit}, 4 {youtube}, 5 {reddit, instagram}.
    static let sets: [[EntryIndex]] = [[], [0], [1], [2], [3], [2, 0]]

    static var rules: ProfileRules {
        ProfileRules(
            blocks: [
                Block(entry: "instagram", created: at("2026-11-01 00:00"), cooldownUntil: at("2026-11-01 02:00")),
                Block(entry: "reddit", created: at("2026-11-01 00:00"), cooldownUntil: at("2026-11-01 02:00")),
            ],
            schedules: [RulesTime.schedule("23:00", "07:00", entries: ["tiktok"], kind: .curfew)],
            grants: [Grant(id: 1, entry: "reddit", kind: .spend, start: at("2026-11-23 22:50"), end: at("2026-11-23 23:02"))]
        )
    }

    static func snapshot(_ profiles: [ProfileRules], at t: Instant = now) -> EnforcementSnapshot {
        EnforcementSnapshot(entrySets: sets, entries: catalog, profiles: profiles, builtAt: t)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String, set: EntrySetID, secondsAfterBuild: Int64, expected: Decision
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "blocked entry: blocked, ttl capped at 10 s", set: 1, secondsAfterBuild: 0,
             expected: Decision(blocked: true, managed: true, ttlCap: 10)),
        Case(label: "curfew in 5 min: open names live 300 s", set: 2, secondsAfterBuild: 0,
             expected: Decision(blocked: false, managed: true, ttlCap: 300)),
        Case(label: "ttl counts down while the snapshot is used", set: 2, secondsAfterBuild: 100,
             expected: Decision(blocked: false, managed: true, ttlCap: 200)),
        Case(label: "ttl floors at 1 s in the last second before the change", set: 2, secondsAfterBuild: 299,
             expected: Decision(blocked: false, managed: true, ttlCap: 1)),
        Case(label: "past the curfew edge the same snapshot blocks (was: open, TTL 1)", set: 2, secondsAfterBuild: 400,
             expected: Decision(blocked: true, managed: true, ttlCap: 10)),
        Case(label: "grant open until 23:02: 420 s", set: 3, secondsAfterBuild: 0,
             expected: Decision(blocked: false, managed: true, ttlCap: 420)),
        Case(label: "unmanaged entry: no cap", set: 4, secondsAfterBuild: 0,
             expected: Decision(blocked: false, managed: false, ttlCap: Decision.uncapped)),
        Case(label: "no entry: no cap", set: 0, secondsAfterBuild: 0,
             expected: Decision(blocked: false, managed: false, ttlCap: Decision.uncapped)),
        Case(label: "open and blocked entries sharing a name: blocked", set: 5, secondsAfterBuild: 0,
             expected: Decision(blocked: true, managed: true, ttlCap: 10)),
        Case(label: "unknown set id counts as no entry", set: 999, secondsAfterBuild: 0,
             expected: Decision(blocked: false, managed: false, ttlCap: Decision.uncapped)),
    ]

    @Test(arguments: cases)
    func decision_table(c: Case) {
        let snap = Self.snapshot([Self.rules])
        let d = snap.decide(profile: 0, set: c.set, now: Self.now + .seconds(c.secondsAfterBuild))
        #expect(d.blocked == c.expected.blocked && d.managed == c.expected.managed && d.ttlCap == c.expected.ttlCap)
    }

    @Test func curfew_names_are_blocked_and_grants_do_not_open_them() {
        // Built at 23:01, inside the curfew; a grant for tiktok would not open it.
        var rules = Self.rules
        rules.grants.append(Grant(id: 2, entry: "tiktok", kind: .token, start: Self.at("2026-11-23 23:00"), end: Self.at("2026-11-23 23:10")))
        let t = Self.at("2026-11-23 23:01")
        let snap = Self.snapshot([rules], at: t)
        #expect(snap.decide(profile: 0, set: 2, now: t).answer == Decision(blocked: true, managed: true, ttlCap: 10).answer)
    }

    @Test func strict_curfew_blocks_unmanaged_names_and_caps_their_ttl_before_it_starts() {
        let strict = ProfileRules(schedules: [RulesTime.schedule("23:00", "06:00", entries: [], kind: .strictCurfew)])
        let before = Self.snapshot([Self.rules, strict])
        #expect(!before.isStrictCurfew(profile: 1, now: Self.now))
        #expect(before.decide(profile: 1, set: 0, now: Self.now).answer == Decision(blocked: false, managed: false, ttlCap: 300).answer)
        let t = Self.at("2026-11-23 23:30")
        let during = Self.snapshot([Self.rules, strict], at: t)
        #expect(during.isStrictCurfew(profile: 1, now: t) && !during.isStrictCurfew(profile: 0, now: t))
        #expect(during.decide(profile: 1, set: 0, now: t).answer == Decision(blocked: true, managed: false, ttlCap: 10).answer)
        #expect(during.decide(profile: 1, set: 4, now: t).blocked)
        // Profile 0 is untouched by profile 1's strict curfew.
        #expect(!during.decide(profile: 0, set: 4, now: t).blocked)
    }

    @Test func unknown_profile_falls_back_to_the_default_profile() {
        let snap = Self.snapshot([Self.rules, ProfileRules()])
        #expect(snap.decide(profile: 7, set: 1, now: Self.now).blocked)
        #expect(snap.decide(profile: -1, set: 1, now: Self.now).blocked)
        #expect(!snap.decide(profile: 1, set: 1, now: Self.now).blocked)
    }

    @Test func valid_until_is_the_earliest_change_of_any_answer() {
        // Curfew at 23:00 is earlier than the grant's end at 23:02.
        #expect(Self.snapshot([Self.rules]).validUntil == Self.at("2026-11-23 23:00"))
        #expect(Self.snapshot([ProfileRules()]).validUntil == nil)
    }

    @Test func empty_snapshot_answers_not_blocked() {
        let snap = EnforcementSnapshot(entrySets: [], entries: [], profiles: [], builtAt: Self.now)
        #expect(snap.decide(profile: 0, set: 3, now: Self.now) == Decision(blocked: false, managed: false, ttlCap: Decision.uncapped))
    }

    /// A faketime bug (SPEC §3): a snapshot built at 22:59:40 kept answering "open, TTL 1" past
    /// the 23:00 curfew edge until something rebuilt it. The timeline flips at the edge itself.
    @Test func a_snapshot_built_before_a_curfew_blocks_at_the_edge_without_a_rebuild() {
        let built = Self.at("2026-11-23 22:59") + .seconds(40)
        let snap = Self.snapshot([Self.rules], at: built)
        let edge = Self.at("2026-11-23 23:00")
        let before = snap.decide(profile: 0, set: 2, now: edge - Span(milliseconds: 1))
        #expect(!before.blocked && before.ttlCap == 1 && before.kind == .scheduled)
        let at = snap.decide(profile: 0, set: 2, now: edge)
        #expect(at.blocked && at.kind == .curfew && at.ttlCap == 10)
        // And it opens again at 07:00 the next morning, still from the same snapshot.
        #expect(!snap.decide(profile: 0, set: 2, now: Self.at("2026-11-24 07:00")).blocked)
        // The spend on reddit ends at 23:02: blocked from that instant.
        #expect(!snap.decide(profile: 0, set: 3, now: Self.at("2026-11-23 23:01")).blocked)
        #expect(snap.decide(profile: 0, set: 3, now: Self.at("2026-11-23 23:02")).blocked)
    }

    @Test func snapshot_answers_agree_with_entry_states_at_every_probe() async {
        // The table and the rules it was built from must never disagree while the snapshot is valid.
        let rules = Self.rules
        let snap = Self.snapshot([rules])
        var t = Self.now
        while t < snap.horizon {
            for (id, members) in Self.sets.enumerated() where id > 0 {
                let states = members.map { rules.status(of: Self.catalog[Int($0)], at: t).state }
                #expect(snap.decide(profile: 0, set: EntrySetID(id), now: t).blocked == states.contains { $0.isBlocking })
            }
            t = t + .seconds(97)
        }
    }
}

extension Decision {
    /// What a DNS answer is made of: blocked or not, managed or not, and the TTL cap.
    var answer: [UInt32] { [blocked ? 1 : 0, managed ? 1 : 0, ttlCap] }
}
