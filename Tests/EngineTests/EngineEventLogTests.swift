import ControlAPI
import ControlServer
import Engine
import Foundation
import Helper
import ScrollOffCore
import Store
import Testing

/// SPEC §12: `events` records rule changes with who made them and refused bypasses with the rule
/// and time that refused them, through the engine's one decision path, on a real database.
@Suite("Engine: rule changes and refusals in events")
struct EngineEventLogTests {
    static func settings(preset: Preset = .strict, zone: String = "UTC", cooldown: Span? = nil, owners: [UInt32] = []) -> ProfileSettings {
        ProfileSettings(name: "default", timeZoneID: zone, preset: preset, overrides: KnobOverrides(cooldown: cooldown), ownerUIDs: owners)
    }

    @Test func every_kind_of_rule_change_is_recorded_once_with_who_made_it() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        // The configuration file: preset, zone and a knob in one reload, then the owners.
        try await engine.applyConfiguredProfiles(default: Self.settings(preset: .balanced, zone: "Europe/London", cooldown: .hours(3)), profiles: [])
        try await engine.applyConfiguredProfiles(default: Self.settings(preset: .balanced, zone: "Europe/London", cooldown: .hours(3), owners: [1000]),
                                                 profiles: [])
        // A person at the control socket.
        try await ChangeActor.$current.withValue("alice (uid 1000)") {
            _ = try await engine.block(["instagram"], reason: "exams")
            time.pass(.minutes(10))
            _ = try await engine.block(["instagram"])
            _ = try await engine.addSchedule(ScheduleRequest(name: "bedtime", from: "02:00", to: "05:00", curfew: true, entries: ["tiktok"], reason: "sleep"))
            _ = try await engine.addSchedule(ScheduleRequest(name: "bedtime", from: "02:00", to: "05:00", curfew: true, entries: ["tiktok", "reddit"]))
            _ = try await engine.focus(length: .minutes(30), entries: ["youtube"], reason: "essay")
            _ = try await engine.addProfile("kids", clients: ["10.0.0.0/24"])
            _ = try await engine.addProfile("kids", clients: ["10.0.1.0/24"])
            time.pass(.hours(4))
            try await engine.tick() // the focus session's end, as the timer sees it
            // SPEC §4a, §5a: an allowance set and cleared; a pause lifted early, and one that ends by itself.
            _ = try await engine.setAllowance(seconds: 1800, entries: ["youtube"], days: .daily, profile: HelperEngine.defaultProfile)
            _ = try await engine.clearAllowance(entries: ["youtube"], days: nil, profile: HelperEngine.defaultProfile)
            _ = try await engine.pause(profile: HelperEngine.defaultProfile, for: .minutes(10), reason: "dinner")
            _ = try await engine.resume(profile: HelperEngine.defaultProfile)
            _ = try await engine.pause(profile: HelperEngine.defaultProfile, for: .minutes(1))
            time.pass(.minutes(2))
            try await engine.tick() // the pause's end, as the timer sees it
            _ = try await engine.unblock(["instagram"])
            try await engine.removeSchedule("bedtime")
            await engine.recordListChange(added: true, name: "extra", url: "https://lists.example.org/extra.txt")
            await engine.recordListChange(added: false, name: "extra", url: "https://lists.example.org/extra.txt")
            _ = try await engine.removeProfile("kids")
        }
        let changes = try await engine.events().map(EventReport.init).compactMap { e in e.ruleChange.map { (e, $0) } }
        let byKind = Dictionary(grouping: changes, by: { $0.1.change })
        for kind in RuleChangeRecord.Change.allCases {
            // Two pauses: one resumed, one that ended by itself.
            #expect(byKind[kind.rawValue]?.count == (kind == .paused ? 2 : 1), "\(kind): \(byKind[kind.rawValue]?.map(\.1.rule) ?? [])")
        }
        let fromFile: Set<String> = ["preset", "timeZone", "knobs", "profileHousehold"]
        for (event, change) in changes {
            if change.change == "focusEnded" {
                #expect(change.actor == "the helper")
                #expect(event.time == Fixture.noon + .minutes(40))
                continue
            }
            if change.change == "pauseEnded" {
                #expect(change.actor == "the helper")
                continue
            }
            #expect(change.actor == (fromFile.contains(change.change) ? "the configuration file" : "alice (uid 1000)"), "\(change.change)")
            #expect(event.message?.contains("by \(change.actor)") == true)
        }
        let curfew = try #require(byKind["scheduleAdded"]?.first?.1)
        #expect(curfew.rule == "curfew “bedtime” 02:00–05:00 daily for tiktok (reason “sleep”)")
        #expect(byKind["scheduleEdited"]?.first?.1.before == curfew.rule)
        #expect(byKind["knobs"]?.first?.1.rule.contains("cooldown") == true)
        #expect(byKind["block"]?.first?.0.entry == "instagram")
        // Machine-wide changes are listed for every profile, and a removed profile's removal outlives it.
        #expect(byKind["profileRemoved"]?.first?.0.profile == nil)
    }

    @Test func a_peek_refused_during_a_curfew_names_the_curfew_and_its_end() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.addSchedule(ScheduleRequest(name: "homework", from: "11:00", to: "14:00", curfew: true, entries: ["instagram"]))
        time.pass(.minutes(5))
        let seen = try #require(await ChangeActor.$current.withValue("bob (uid 1001)") {
            await refusal { () async throws(EngineError) in try await engine.peek("instagram") }
        })
        #expect(seen.rule == .curfew)
        let refused = try await engine.events().map(EventReport.init).filter { $0.kind == "bypassRefused" }
        #expect(refused.count == 1)
        let record = try #require(refused.first?.refusal)
        #expect(record.curfew == "homework")
        #expect(record.opensAt == Fixture.noon + .hours(2))
        // The event keeps the refusal exactly as the person got it.
        #expect(record.rule == "curfew")
        #expect(record.subject == seen.subject)
        #expect(record.opensAt == seen.opensAt)
        #expect(record.reason == seen.reason)
        #expect(record.message == seen.message)
        #expect(record.action == "peek")
        #expect(record.actor == "bob (uid 1001)")
        #expect(refused.first?.time == Fixture.noon + .minutes(5))
        #expect(refused.first?.message == seen.message)
        // "Not blocked" is no rule holding, so it is not recorded.
        _ = await refusal { () async throws(EngineError) in try await engine.peek("example.org") }
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "bypassRefused" }.count == 1)
    }

    @Test func a_flood_of_refused_peeks_writes_at_most_20_rows_an_hour_and_counts_every_attempt() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        let domains = (1...30).map { "d\($0).example.com" }
        _ = try await engine.addSchedule(ScheduleRequest(name: "study", from: "11:00", to: "15:00", curfew: true, entries: domains))
        var attempts = 0
        // A script hammering one entry: one row, counted.
        for _ in 0..<200 {
            _ = await refusal { () async throws(EngineError) in try await engine.peek("d1.example.com") }
            attempts += 1
            time.pass(Span(milliseconds: 50))
        }
        #expect(try await Self.refusalRows(engine).count == 1)
        // Then every entry, and tokens too: past 20 rows in the hour, attempts fold into the newest row.
        for d in domains {
            _ = await refusal { () async throws(EngineError) in try await engine.peek(d) }
            _ = await refusal { () async throws(EngineError) in try await engine.token(d) }
            attempts += 2
        }
        let rows = try await Self.refusalRows(engine)
        #expect(rows.count == 20)
        #expect(rows.reduce(0) { $0 + $1.count + $1.folded } == attempts)
        #expect(rows.first?.count == 201)
        #expect(rows.first?.lastAt == Fixture.noon + Span(milliseconds: 200 * 50))
        // Service goes on: the curfew still holds and a bypass outside it still works.
        #expect(await engine.decision("d1.example.com").blocked)
        // An hour later there is room for new rows again.
        time.pass(.minutes(61))
        _ = await refusal { () async throws(EngineError) in try await engine.peek("d2.example.com") }
        #expect(try await Self.refusalRows(engine).count == 21)
    }

    static func refusalRows(_ engine: HelperEngine) async throws -> [RefusalInfo] {
        try await engine.events().map(EventReport.init).filter { $0.kind == "bypassRefused" }.compactMap(\.refusal)
    }

    @Test func refused_unblocks_in_a_burst_are_one_row_with_their_count() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.block(["instagram"])
        for _ in 0..<5 {
            time.pass(.seconds(30))
            _ = await refusal { () async throws(EngineError) in try await engine.unblock(["instagram"]) }
        }
        let rows = try await engine.events().map(EventReport.init).filter { $0.kind == "editRefused" }
        #expect(rows.count == 1)
        #expect(rows.first?.refusal?.count == 5)
        #expect(rows.first?.refusal?.action == "unblock")
    }
}

/// SPEC §8: the plan shown at a bypass fits the moment, and is counted once per bypass flow.
@Suite("Engine: the plan that fits the moment")
struct EnginePlanMomentTests {
    @Test func at_2200_the_night_plan_at_0800_the_morning_plan_and_per_entry_the_entry_plan() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon + .hours(10)) // 22:00 UTC, the profile's zone
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.block(["instagram", "youtube"])
        let night = try await engine.addPlan(when: "I can't sleep at night", then: "I will read a paper book")
        let morning = try await engine.addPlan(when: "I wake up in the morning", then: "I will open the curtains first")
        let youtube = try await engine.addPlan(when: "YouTube pulls me in", then: "I will put on a podcast")
        _ = try await engine.addPlan(when: "I feel bored", then: "I will stretch") // newest, fits any moment

        #expect(try await engine.bypassPreview(entry: "instagram").plan?.id == night.id)
        #expect(try await engine.bypassPreview(entry: "youtube").plan?.id == youtube.id)
        time.pass(.hours(10)) // 08:00 the next day
        #expect(try await engine.bypassPreview(entry: "instagram").plan?.id == morning.id)
        time.pass(.hours(5)) // 13:00: no time plan fits; the newest that fits any moment does
        #expect(try await engine.bypassPreview(entry: "instagram").plan?.when == "I feel bored")
    }

    @Test func times_referenced_counts_once_per_bypass_flow_not_per_refresh() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon + .hours(10))
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.block(["instagram"])
        let night = try await engine.addPlan(when: "I can't sleep at night", then: "I will read a paper book")
        func shown() async -> Int { await engine.planList().first { $0.id == night.id }?.shownCount ?? -1 }

        // A flow: the preview shows it (and a refresh shows it again), then the peek.
        _ = try await engine.bypassPreview(entry: "instagram")
        time.pass(.seconds(5))
        _ = try await engine.bypassPreview(entry: "instagram")
        #expect(await shown() == 1)
        let peek = try await engine.peek("instagram")
        #expect(peek.plan?.id == night.id)
        #expect(peek.plan?.shownCount == 1)
        #expect(await shown() == 1)
        // A peek with no preview (a script) is a flow of its own.
        time.pass(.minutes(4))
        _ = try await engine.peek("instagram")
        #expect(await shown() == 2)
        // A new flow after the grant counts again; the count is on disk.
        time.pass(.minutes(4))
        _ = try await engine.bypassPreview(entry: "instagram")
        #expect(await shown() == 3)
        let reopened = try await Fixture.start(dir, time)
        #expect(await reopened.planList().first { $0.id == night.id }?.shownCount == 3)
    }
}
