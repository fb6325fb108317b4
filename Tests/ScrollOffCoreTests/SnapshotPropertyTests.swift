import Testing
import PropertyBased
import ScrollOffCore

/// The timeline snapshot never disagrees with the rules it was built from, at any instant of its
/// horizon, DST weeks included; and `status`'s next change is exactly the first instant at which
/// `decide` answers differently (SPEC §3 "Enforcement at every instant", §9 TTLs, §13 `status`).
@Suite struct SnapshotPropertyTests {
    static let catalog: [EntryID] = ["a", "b", "c"]
    static let sets: [[EntryIndex]] = [[], [0], [1], [2], [0, 1], [1, 2], [0, 1, 2]]
    static let zones = ["Europe/Berlin", "America/New_York", "UTC", "Australia/Sydney"]
    /// Midnight UTC before each 2026 DST change of the zones above, and an ordinary week.
    static let weeks: [Instant] = [
        RulesTime.utc("2026-03-07T00:00:00Z"), // New York springs forward on the 8th
        RulesTime.utc("2026-03-28T00:00:00Z"), // Berlin springs forward on the 29th
        RulesTime.utc("2026-04-04T00:00:00Z"), // Sydney falls back on the 5th
        RulesTime.utc("2026-10-03T00:00:00Z"), // Sydney springs forward on the 4th
        RulesTime.utc("2026-10-24T00:00:00Z"), // Berlin falls back on the 25th
        RulesTime.utc("2026-10-31T00:00:00Z"), // New York falls back on Nov 1st
        RulesTime.utc("2026-11-23T00:00:00Z"),
    ]

    struct RandomRule: Sendable {
        var start: Int, length: Int, days: UInt8, entries: UInt8, kind: Int, zone: Int, enabled: Bool

        func schedule(_ name: String) -> Schedule {
            var set = Set<EntryID>()
            for (i, e) in SnapshotPropertyTests.catalog.enumerated() where entries & (1 << i) != 0 { set.insert(e) }
            let kind = Schedule.Kind(rawValue: kind) ?? .block
            // Whole quarter hours, so edges land inside DST's skipped and repeated hours too.
            let from = LocalTime(hour: start / 4 % 24, minute: start % 4 * 15) ?? RulesTime.time("00:00")
            let endMinute = (start * 15 + length * 15) % 1440
            let to = LocalTime(hour: endMinute / 60, minute: endMinute % 60) ?? RulesTime.time("00:00")
            return Schedule(name: name, start: from, end: to, days: Weekdays(rawValue: days),
                            timeZoneID: SnapshotPropertyTests.zones[zone], entries: kind.isStrict && entries & 8 != 0 ? [] : (set.isEmpty ? ["a"] : set),
                            kind: kind, reason: "r-\(name)", enabled: enabled)
        }
    }

    static let rule = zip(
        Gen.int(in: 0...95), Gen.int(in: 1...64), Gen.uint8(in: 1...127), Gen.uint8(in: 1...15),
        Gen.int(in: 0...2), Gen.int(in: 0...3), Gen.bool(0.9)
    ).map { RandomRule(start: $0, length: $1, days: $2, entries: $3, kind: $4, zone: $5, enabled: $6) }

    /// (entry, minutes after the week's start, length in minutes)
    static let oneOff = zip(Gen.int(in: 0...2), Gen.int(in: 0...(60 * 24 * 4)), Gen.int(in: 1...180))

    static func rules(_ schedules: [RandomRule], blocks: UInt8, focus: [(Int, Int, Int)], grants: [(Int, Int, Int)], week: Instant) -> ProfileRules {
        ProfileRules(
            blocks: catalog.enumerated().filter { blocks & (1 << $0.offset) != 0 }
                .map { Block(entry: $0.element, created: week, cooldownUntil: week, reason: "all day \($0.element)") },
            schedules: schedules.enumerated().map { $1.schedule("s\($0)") },
            focusSessions: focus.enumerated().compactMap { i, f in
                try? FocusSession(id: Int64(i), entries: [catalog[f.0]], startingAt: week + .minutes(Int64(f.1)), length: .minutes(Int64(f.2)))
            },
            grants: grants.enumerated().map { i, g in
                let start = week + .minutes(Int64(g.1))
                return Grant(id: Int64(i), entry: catalog[g.0], kind: .spend, start: start, end: start + .minutes(Int64(g.2)))
            })
    }

    @Test func timeline_snapshot_agrees_with_status_at_10000_random_instants_dst_weeks_included() async {
        await propertyCheck(
            count: 200,
            input: Self.rule.array(of: 0...4), Gen.uint8(in: 0...7), Self.oneOff.array(of: 0...2), Self.oneOff.array(of: 0...3),
            Gen.int(in: 0...6), Gen.int(in: 0...(60 * 24 * 3)), Gen.int(in: 0...Int(EnforcementSnapshot.defaultHorizon.milliseconds / 1000 - 1)).array(of: 50) // 200 × 50 = 10,000 instants
        ) { schedules, blocks, focus, grants, weekIndex, buildMinute, probes in
            let week = Self.weeks[weekIndex]
            let rules = Self.rules(schedules, blocks: blocks, focus: focus, grants: grants, week: week)
            let built = week + .minutes(Int64(buildMinute))
            let snap = EnforcementSnapshot(entrySets: Self.sets, entries: Self.catalog, profiles: [rules], builtAt: built)
            for offset in probes {
                let now = built + .seconds(Int64(offset))
                let strict = rules.strictCurfew(at: now) != nil
                let statuses = Self.catalog.map { rules.status(of: $0, at: now) }
                for (id, members) in Self.sets.enumerated() {
                    let decision = snap.decide(profile: 0, set: EntrySetID(id), now: now)
                    let kinds = members.map { statuses[Int($0)].state.kind }
                    let kind = kinds.max() ?? .none
                    #expect(decision.kind == kind, "set \(id) at \(now.millisecondsSince1970)")
                    #expect(decision.blocked == (kind.isBlocking || (!kind.isManaged && strict)), "set \(id) at \(now.millisecondsSince1970)")
                    #expect(decision.managed == kind.isManaged)
                    #expect(decision.ttlCap >= 1)
                    if decision.blocked { #expect(decision.ttlCap <= Decision.blockedTTLCap) }
                    if let change = decision.nextChange {
                        #expect(Int64(decision.ttlCap) <= max(1, (change - now).milliseconds / 1000))
                    }
                }
                // One entry per set: status's next change is where decide first answers differently.
                for (i, status) in statuses.enumerated() {
                    let decision = snap.decide(profile: 0, set: EntrySetID(i + 1), now: now)
                    #expect(snap.kind(profile: 0, entry: i, now: now) == status.state.kind)
                    guard status.state.isManaged else { continue }
                    if let change = status.nextChange, change < snap.horizon {
                        #expect(decision.nextChange == change, "entry \(i) at \(now.millisecondsSince1970)")
                        #expect(snap.decide(profile: 0, set: EntrySetID(i + 1), now: change - Span(milliseconds: 1)).kind == status.state.kind)
                        #expect(snap.decide(profile: 0, set: EntrySetID(i + 1), now: change).kind == status.nextState)
                    } else {
                        #expect(decision.nextChange.map { $0 >= snap.horizon } ?? true, "entry \(i) at \(now.millisecondsSince1970)")
                    }
                }
            }
        }
    }

    @Test func past_the_horizon_managed_names_fail_closed_and_unmanaged_stay_open() {
        let week = Self.weeks[6]
        let rules = ProfileRules(schedules: [RulesTime.schedule("09:00", "17:00", zone: "UTC", entries: ["a"])])
        let snap = EnforcementSnapshot(entrySets: Self.sets, entries: Self.catalog, profiles: [rules], builtAt: week)
        let late = snap.horizon + .hours(1)
        #expect(snap.needsRebuild(at: late) && !snap.needsRebuild(at: week))
        #expect(snap.decide(profile: 0, set: 1, now: late) == Decision(blocked: true, managed: true, ttlCap: 1, kind: .blocked, changeAt: late.millisecondsSince1970))
        #expect(!snap.decide(profile: 0, set: 2, now: late).blocked)
        // Inside the horizon the same names follow the schedule: open at 08:00 on day 2, blocked at 09:00.
        #expect(!snap.decide(profile: 0, set: 1, now: week + .hours(24 + 8)).blocked)
        #expect(snap.decide(profile: 0, set: 1, now: week + .hours(24 + 9)).blocked)
    }

    /// A strict curfew blocks every name (SPEC §2); past the horizon nobody knows whether one is in
    /// force, so a profile with one fails closed for unmanaged names too, and a profile without
    /// one is untouched.
    @Test func past_the_horizon_a_profile_with_a_strict_curfew_blocks_unmanaged_names_too() {
        let week = Self.weeks[6]
        let strict = ProfileRules(schedules: [RulesTime.schedule("23:00", "06:00", zone: "UTC", entries: [], kind: .strictCurfew)])
        let plain = ProfileRules(schedules: [RulesTime.schedule("09:00", "17:00", zone: "UTC", entries: ["a"])])
        let snap = EnforcementSnapshot(entrySets: Self.sets, entries: Self.catalog, profiles: [plain, strict], builtAt: week)
        let late = snap.horizon + .hours(1)
        let unmanaged = snap.decide(profile: 1, set: 2, now: late)
        #expect(unmanaged.blocked && !unmanaged.managed && unmanaged.ttlCap == 1)
        #expect(snap.decide(profile: 1, set: 0, now: late).blocked)
        #expect(!snap.decide(profile: 0, set: 2, now: late).blocked)
        // Inside the horizon the strict curfew follows its window: open at 12:00 on day 2.
        #expect(!snap.decide(profile: 1, set: 2, now: week + .hours(24 + 12)).blocked)
    }
}
