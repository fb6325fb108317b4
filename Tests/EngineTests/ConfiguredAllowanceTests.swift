import Engine
import Foundation
import ScrollOffCore
import Store
import Testing

/// Daily allowances from the configuration file (`[[allowances]]`, SPEC §4a) through the engine: the
/// file's value is applied at start and at every reload and wins over a change made since with the
/// CLI; lowering applies at once, raising waits for the cooldowns and locks and then applies by
/// itself, as a loosening of the file's profiles does; allowances the file does not name stay.
@Suite struct ConfiguredAllowanceTests {
    static let defaultSettings = ProfileSettings(name: HelperEngine.defaultProfile, timeZoneID: "UTC", preset: .strict)

    static func youtube(_ seconds: Int64) -> [ConfiguredAllowance] {
        [ConfiguredAllowance(profile: HelperEngine.defaultProfile, entries: ["youtube"], secondsByWeekday: Array(repeating: seconds, count: 7))]
    }

    static func apply(_ engine: HelperEngine, _ allowances: [ConfiguredAllowance]) async throws -> ProfileConfigurationReport {
        try await engine.applyConfiguredProfiles(default: defaultSettings, profiles: [], allowances: allowances)
    }

    static func youtubeToday(_ engine: HelperEngine) async throws -> AllowanceReading? {
        try await engine.allowances(profile: HelperEngine.defaultProfile).allowances.first { $0.allowance.entries == [EntryID("youtube")] }
    }

    @Test func the_files_allowance_is_set_lowered_at_once_and_its_raise_waits_for_the_cooldown_then_applies_by_itself() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)

        let set = try await Self.apply(engine, Self.youtube(3600))
        #expect(set.allowances == ["default: 1 h every day for youtube"], "\(set)")
        #expect(try await Self.youtubeToday(engine)?.leftTodaySeconds == 3600)
        // The same file again changes nothing.
        #expect(try await Self.apply(engine, Self.youtube(3600)) == ProfileConfigurationReport())

        // Lowering from the file applies at once and starts the allowance's cooldown (2 h, strict).
        let lowered = try await Self.apply(engine, Self.youtube(1800))
        #expect(lowered.heldBack.isEmpty)
        #expect(try await Self.youtubeToday(engine)?.todaySeconds == 1800)

        // Raising it again is a loosening: held back, reported with when it applies.
        let raised = try await Self.apply(engine, Self.youtube(3600))
        #expect(raised.heldBack.count == 1)
        #expect(raised.heldBack.first?.contains("raising the daily allowance for youtube waits until 2026-11-18T14:00:00Z") == true, "\(raised.heldBack)")
        #expect(try await Self.youtubeToday(engine)?.todaySeconds == 1800)
        time.pass(.hours(1))
        try await engine.tick()
        #expect(try await Self.youtubeToday(engine)?.todaySeconds == 1800, "still inside the cooldown")
        time.pass(.hours(1))
        try await engine.tick()
        #expect(try await Self.youtubeToday(engine)?.todaySeconds == 3600, "the timer applies the file once the cooldown ends")
        // Recorded as the configuration file's rule changes (SPEC §12).
        let changes = try await engine.events(profile: HelperEngine.defaultProfile).compactMap(\.ruleChange)
        #expect(changes.filter { $0.actor == ChangeActor.configurationFile }.count >= 3, "\(changes)")
    }

    @Test func a_cli_change_stands_until_the_next_reload_where_the_file_wins_and_others_stay() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await Self.apply(engine, Self.youtube(3600))
        // An owner raises it with the CLI (no lock holds) and gives any entry 10 minutes.
        _ = try await engine.setAllowance(seconds: 5400, entries: ["youtube"], days: .daily, profile: HelperEngine.defaultProfile)
        _ = try await engine.setAllowance(seconds: 600, entries: [], days: .daily, profile: HelperEngine.defaultProfile)
        #expect(try await Self.youtubeToday(engine)?.todaySeconds == 5400)
        // The reload puts the file's hour back (a lowering: at once); the CLI's own allowance stays.
        let reload = try await Self.apply(engine, Self.youtube(3600))
        #expect(reload.heldBack.isEmpty)
        #expect(try await Self.youtubeToday(engine)?.todaySeconds == 3600)
        let all = try await engine.allowances(profile: HelperEngine.defaultProfile).allowances
        #expect(all.first { $0.allowance.entries.isEmpty }?.todaySeconds == 600, "\(all)")
        // Survives a restart: the file's allowance is committed like the CLI's.
        let again = try await Fixture.start(dir, time)
        #expect(try await Self.youtubeToday(again)?.todaySeconds == 3600)
    }

    @Test func a_raise_from_the_file_waits_for_a_block_of_the_entry_it_covers() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.block(["youtube"])
        let held = try await Self.apply(engine, Self.youtube(3600))
        #expect(held.heldBack.count == 1, "a new allowance is a loosening the block's cooldown holds: \(held)")
        #expect(try await Self.youtubeToday(engine) == nil)
        time.pass(.hours(2))
        try await engine.tick()
        #expect(try await Self.youtubeToday(engine)?.todaySeconds == 3600)
    }

    @Test func an_unknown_entry_in_the_files_allowance_is_refused_with_what_to_do() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        do {
            _ = try await Self.apply(engine, [ConfiguredAllowance(profile: HelperEngine.defaultProfile, entries: ["youtub"], secondsByWeekday: [60, 60, 60, 60, 60, 60, 60])])
            Issue.record("an unknown entry must be refused")
        } catch {
            #expect("\(error)".contains("youtub"), "\(error)")
        }
        #expect(try await engine.allowances(profile: HelperEngine.defaultProfile).allowances.isEmpty)
    }
}
