import ScrollOffCore

/// Builds a snapshot for 3 profiles x 50 entries x 2,000 entry sets and times `decide`.
enum DecisionBench {
    static let profiles = 3
    static let entries = 50
    static let sets = 2_000

    /// A fixed-seed generator so that every run measures the same table and the same queries.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static func run(_ arguments: [String]) {
        let decisions = arguments.first.flatMap { Int($0) } ?? 20_000_000
        let now = Instant(secondsSince1970: 1_795_460_100) // 2026-11-23 22:55 Europe/Berlin
        let catalog = (0..<entries).map { EntryID("service\($0)") }
        var rng = SplitMix(state: 42)

        // Profile rules: around-the-clock blocks, a block window, a curfew, a strict curfew, grants.
        func zoneSchedule(_ name: String, _ from: Int, _ to: Int, _ kind: Schedule.Kind, _ members: Set<EntryID>) -> Schedule {
            Schedule(name: name, start: hour(from), end: hour(to), days: .daily,
                     timeZoneID: "Europe/Berlin", entries: members, kind: kind)
        }
        let allRules: [ProfileRules] = (0..<profiles).map { p in
            var blocks: [Block] = []
            var members: [Set<EntryID>] = [[], []]
            var grants: [Grant] = []
            for (i, e) in catalog.enumerated() {
                switch (i + p) % 4 {
                case 0: blocks.append(Block(entry: e, created: now, cooldownUntil: now))
                case 1: members[0].insert(e)
                case 2: members[1].insert(e)
                default: break
                }
                if i % 10 == p { grants.append(Grant(id: Int64(i), entry: e, kind: .spend, start: now - .minutes(1), end: now + .minutes(9))) }
            }
            var schedules = [zoneSchedule("day", 9, 17, .block, members[0]), zoneSchedule("night", 23, 7, .curfew, members[1])]
            if p == 2 { schedules.append(zoneSchedule("strict", 0, 6, .strictCurfew, [])) }
            return ProfileRules(blocks: blocks, schedules: schedules, grants: grants)
        }

        var sets: [[EntryIndex]] = [[]]
        while sets.count < Self.sets {
            let size = 1 + rng.below(3)
            sets.append((0..<size).map { _ in EntryIndex(rng.below(entries)) })
        }

        let buildAllocations = AllocationCounter.read?()
        let buildStart = monotonicNanoseconds()
        let snapshot = EnforcementSnapshot(entrySets: sets, entries: catalog, profiles: allRules, builtAt: now)
        let built = monotonicNanoseconds()
        let builtAllocations = AllocationCounter.read?()

        // Queries are drawn up front so the loop measures only the decision; 4,096 of them keep the
        // query arrays in L1/L2 so the figure is the decision, not the benchmark's own memory traffic.
        let queryCount = 1 << 12
        var queryProfiles = [Int](repeating: 0, count: queryCount)
        var querySets = [EntrySetID](repeating: 0, count: queryCount)
        for i in 0..<queryCount {
            queryProfiles[i] = rng.below(profiles)
            querySets[i] = EntrySetID(rng.below(Self.sets))
        }

        var blocked = 0
        var ttlSum: UInt64 = 0
        let allocationsBefore = AllocationCounter.read?()
        let start = monotonicNanoseconds()
        queryProfiles.withUnsafeBufferPointer { ps in
            querySets.withUnsafeBufferPointer { ss in
                for i in 0..<decisions {
                    let q = i & (queryCount - 1)
                    // Spread over 18 h of the timeline, so lookups land in every segment, edges included.
                    let d = snapshot.decide(profile: ps[q], set: ss[q], now: now + Span(milliseconds: Int64(i & 0xFFFFF) &* 64))
                    if d.blocked { blocked &+= 1 }
                    ttlSum &+= UInt64(d.ttlCap & 0xFFFF)
                }
            }
        }
        let end = monotonicNanoseconds()
        let allocationsAfter = AllocationCounter.read?()

        let ns = Double(end - start) / Double(decisions)
        print("decision bench: \(profiles) profiles x \(entries) entries x \(Self.sets) entry sets")
        print("  build timelines:  \(format(Double(built - buildStart) / 1e6)) ms (\(format(Double((snapshot.horizon - now).milliseconds) / 3.6e6)) h horizon)")
        print("  decisions:        \(decisions)")
        print("  ns per decision:  \(format(ns))")
        if let before = buildAllocations, let after = builtAllocations {
            // Shows the counter is live: building the timelines does allocate.
            print("  allocations while building: \(after - before)")
        }
        if let before = allocationsBefore, let after = allocationsAfter {
            let delta = after - before
            print("  allocations in loop: \(delta) (\(format(Double(delta) / Double(decisions))) per decision)")
        } else {
            print("  allocations in loop: unavailable (run through bench/decision.sh, which preloads bench/alloc_count.c)")
        }
        print("  checksum: blocked \(blocked), ttl \(ttlSum)")
    }

    /// Bench constants only; a wrong literal here is a bug in the bench.
    static func hour(_ h: Int) -> LocalTime {
        guard let t = LocalTime(hour: h, minute: 0) else { fatalError("bench hour \(h) out of range") }
        return t
    }

    static func format(_ value: Double) -> String {
        let scaled = (value * 100).rounded() / 100
        return "\(scaled)"
    }
}
