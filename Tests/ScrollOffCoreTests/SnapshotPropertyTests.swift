import Testing
import PropertyBased
import ScrollOffCore

/// The snapshot never disagrees with the rules it was built from, and its TTLs never outlive a change.
@Suite struct SnapshotPropertyTests {
    @Test func decisions_match_entry_states_and_ttls_end_before_the_next_change() async {
        let catalog: [EntryID] = ["a", "b", "c"]
        let sets: [[EntryIndex]] = [[], [0], [1], [2], [0, 1], [1, 2], [0, 1, 2]]
        let grantGen = zip(Gen.int(in: 0...2), Gen.int(in: 0...(24 * 4 * 8)), Gen.int(in: 1...120))
        await propertyCheck(
            count: 200,
            input: RulesPropertyTests.randomSchedule.array(of: 0...3), grantGen.array(of: 0...4),
            Gen.int(in: 0...(24 * 60 * 7)), Gen.int(in: 0...600)
        ) { schedules, grants, buildMinute, laterSeconds in
            let base = RulesPropertyTests.base
            let rules = ProfileRules(
                blocks: [Block(entry: "c", created: base, cooldownUntil: base)],
                schedules: schedules.enumerated().map { $1.schedule(name: "s\($0)") },
                grants: grants.enumerated().map { i, g in
                    let start = base + .minutes(Int64(g.1) * 15)
                    return Grant(id: Int64(i), entry: catalog[g.0], kind: .peek, start: start, end: start + .minutes(Int64(g.2)))
                }
            )
            let built = base + .minutes(Int64(buildMinute))
            let snap = EnforcementSnapshot(entrySets: sets, profiles: [rules.evaluate(entries: catalog, at: built)], builtAt: built)
            // Asked some seconds after the build, but before the snapshot stops being valid.
            var now = built + .seconds(Int64(laterSeconds))
            if let valid = snap.validUntil, now >= valid { now = built }
            for (id, members) in sets.enumerated() {
                let decision = snap.decide(profile: 0, set: EntrySetID(id), now: now)
                let statuses = members.map { rules.status(of: catalog[Int($0)], at: now) }
                // A strict curfew blocks every name, the entry-less set 0 included.
                let strict = rules.strictCurfew(at: now) != nil
                #expect(decision.blocked == (strict || statuses.contains { $0.state.isBlocking }), "set \(id) at \(now)")
                #expect(decision.managed == statuses.contains { $0.state.isManaged })
                #expect(decision.ttlCap >= 1)
                if decision.blocked { #expect(decision.ttlCap <= Decision.blockedTTLCap) }
                let strictEdge = rules.nextStrictCurfewEdge(after: now)
                if let change = (statuses.compactMap(\.nextChange) + [strictEdge].compactMap { $0 }).min() {
                    #expect(Int64(decision.ttlCap) <= max(1, (change - now).milliseconds / 1000))
                }
            }
        }
    }
}
