import Testing
import PropertyBased
import ScrollOffCore

/// Properties over random rules and random operation sequences (SPEC §2, §3).
/// Schedules here use whole hours in UTC so that the independent oracles below can sample every hour
/// of a week; DST is covered by the table-driven tests.
@Suite struct RulesPropertyTests {
    static let base = RulesTime.utc("2026-11-23T00:00:00Z") // a Monday
    static let cooldown = Span.hours(2)

    struct RandomSchedule: Sendable {
        var start: Int, length: Int, days: UInt8, entries: UInt8, kind: Int, enabled: Bool

        func schedule(name: String = "s", cooldownUntil: Instant? = nil) -> Schedule {
            let entryNames: [EntryID] = ["a", "b", "c"]
            var set = Set<EntryID>()
            for (i, e) in entryNames.enumerated() where entries & (1 << i) != 0 { set.insert(e) }
            let startTime = LocalTime(hour: start, minute: 0) ?? RulesTime.time("00:00")
            let endTime = LocalTime(hour: (start + length) % 24, minute: 0) ?? RulesTime.time("00:00")
            return Schedule(
                name: name, start: startTime, end: endTime, days: Weekdays(rawValue: days), timeZoneID: "UTC",
                entries: set.isEmpty ? ["a"] : set, kind: Schedule.Kind(rawValue: kind) ?? .block,
                enabled: enabled, cooldownUntil: cooldownUntil
            )
        }
    }

    static let randomSchedule = zip(
        Gen.int(in: 0...23), Gen.int(in: 1...16), Gen.uint8(in: 1...127), Gen.uint8(in: 1...7),
        Gen.int(in: 0...2), Gen.bool(0.8)
    ).map { RandomSchedule(start: $0, length: $1, days: $2, entries: $3, kind: $4, enabled: $5) }

    enum Step: Sendable {
        case wait(hours: Int, minutes: Int)
        case edit(RandomSchedule)
        case delete
    }

    static let step = zip(Gen.int(in: 0...9), Gen.int(in: 0...4), Gen.int(in: 0...59), randomSchedule).map { choice, hours, minutes, s -> Step in
        switch choice {
        case 0...3: return .wait(hours: hours, minutes: minutes)
        case 4: return .delete
        default: return .edit(s)
        }
    }

    /// Independent oracle for "was the schedule locked": an enabled curfew that is active now or
    /// becomes active within the next 30 minutes (sampled every minute).
    static func lockedByOracle(_ s: Schedule, at now: Instant) -> Bool {
        guard s.enabled, s.kind.isCurfew else { return false }
        return (0...30).contains { s.isActive(at: now + .minutes(Int64($0))) }
    }

    /// Independent oracle for "covers less": some hour of a week is covered by `old` and not `new`.
    static func coversLessByOracle(_ old: Schedule, _ new: Schedule) -> Bool {
        var probeOld = old, probeNew = new
        probeOld.enabled = true
        probeNew.enabled = true
        return (0..<(24 * 8)).contains { h in
            let t = base + .hours(Int64(h)) + .minutes(30)
            return probeOld.isActive(at: t) && !probeNew.isActive(at: t)
        }
    }

    @Test func no_weakening_passes_inside_a_lock_or_cooldown() async {
        await propertyCheck(count: 200, input: Self.randomSchedule, Self.step.array(of: 1...25)) { initial, steps in
            var now = Self.base + .hours(24)
            var current: Schedule? = try? ChangeRules.add(initial.schedule(), at: now, cooldown: Self.cooldown)
            for step in steps {
                guard let old = current else { return }
                switch step {
                case .wait(let h, let m):
                    now = now + .hours(Int64(h)) + .minutes(Int64(m))
                case .delete:
                    do throws(Refusal) {
                        try ChangeRules.checkDelete(old, at: now)
                        #expect(!Self.lockedByOracle(old, at: now), "deleted a locked curfew at \(now)")
                        #expect(!old.enabled || old.cooldownUntil.map { now >= $0 } ?? true, "deleted in cooldown")
                        current = nil
                    } catch {
                        #expect(error.opensAt.map { $0 > now } ?? false)
                    }
                case .edit(let r):
                    var new = r.schedule(name: old.name)
                    new.reason = old.reason
                    do throws(Refusal) {
                        let result = try ChangeRules.edit(from: old, to: new, at: now, cooldown: Self.cooldown)
                        let ruleChanged = ScheduleChange(from: old, to: new).changesRules
                        if ruleChanged {
                            #expect(!Self.lockedByOracle(old, at: now), "edited a locked curfew at \(now)")
                        }
                        let inCooldown = old.cooldownUntil.map { now < $0 } ?? false
                        if old.enabled && inCooldown {
                            #expect(new.enabled, "disabled in cooldown")
                            #expect(old.entries.isSubset(of: new.entries) || new.kind.isStrict, "removed entries in cooldown")
                            #expect(new.kind >= old.kind, "softer kind in cooldown")
                            #expect(!Self.coversLessByOracle(old, new), "covers less in cooldown")
                        }
                        // The cooldown never gets shorter.
                        #expect((result.cooldownUntil ?? now) >= (old.cooldownUntil ?? now))
                        current = result
                    } catch {
                        if error.rule != .invalidSchedule { #expect(error.opensAt.map { $0 > now } ?? false) }
                    }
                }
            }
        }
    }

    @Test func nothing_opens_during_a_curfew() async {
        let grantGen = zip(Gen.int(in: 0...2), Gen.int(in: 0...(24 * 7 * 4)), Gen.int(in: 1...180))
        await propertyCheck(count: 200, input: Self.randomSchedule.array(of: 1...4), grantGen.array(of: 0...6), Gen.int(in: 0...(24 * 7 * 60)).array(of: 20)) { schedules, grants, probes in
            let entries: [EntryID] = ["a", "b", "c"]
            let rules = ProfileRules(
                blocks: [Block(entry: "b", created: Self.base, cooldownUntil: Self.base)],
                schedules: schedules.enumerated().map { $1.schedule(name: "s\($0)") },
                grants: grants.enumerated().map { i, g in
                    let start = Self.base + .minutes(Int64(g.1) * 15)
                    return Grant(id: Int64(i), entry: entries[g.0], kind: .spend, start: start, end: start + .minutes(Int64(g.2)))
                }
            )
            for minute in probes {
                let t = Self.base + .minutes(Int64(minute))
                for e in entries {
                    let state = rules.status(of: e, at: t).state
                    // A curfew listing the entry puts it in curfew; a strict curfew blocks every
                    // name (through the snapshot flag), so no entry may read as open under one.
                    let listedCurfew = rules.schedules.contains { $0.kind.isCurfew && $0.entries.contains(e) && $0.isActive(at: t) }
                    let anyCurfew = rules.schedules.contains { $0.kind.isCurfew && $0.covers(e) && $0.isActive(at: t) }
                    if listedCurfew { #expect(state == .curfew, "\(e) is \(state) during a curfew at \(t)") }
                    if case .open = state { #expect(!anyCurfew) }
                }
            }
        }
    }

    @Test func state_holds_until_next_change_and_differs_there() async {
        await propertyCheck(count: 200, input: Self.randomSchedule.array(of: 1...3), Gen.int(in: 0...(24 * 7 * 60)), Gen.int(in: 1...99).array(of: 5)) { schedules, minute, fractions in
            let rules = ProfileRules(schedules: schedules.enumerated().map { $1.schedule(name: "s\($0)") })
            let t = Self.base + .minutes(Int64(minute))
            for e in ["a", "b", "c"] as [EntryID] {
                let status = rules.status(of: e, at: t)
                guard let change = status.nextChange else { continue }
                #expect(change > t)
                #expect(rules.status(of: e, at: change).state.kind != status.state.kind)
                #expect(rules.status(of: e, at: change).state.kind == status.nextState)
                let length = (change - t).milliseconds
                for f in fractions {
                    let probe = t + Span(milliseconds: length * Int64(f) / 100)
                    #expect(rules.status(of: e, at: probe).state.kind == status.state.kind)
                }
            }
        }
    }
}
