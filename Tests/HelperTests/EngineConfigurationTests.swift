import Foundation
@testable import Helper
import ScrollOffCore
import Store
import Testing

/// Profiles from the configuration file, applied at every start and reload through the engine
/// (issue 6), and what a reload may not loosen while a lock is in force (SPEC §3, §11).
@Suite struct EngineConfigurationTests {
    static func settings(_ name: String, clients: [String] = [], zone: String = "UTC", preset: Preset = .strict,
                         cooldown: Span? = nil, owners: [UInt32] = []) -> ProfileSettings {
        ProfileSettings(name: name, clientCIDRs: clients, timeZoneID: zone, preset: preset,
                        overrides: KnobOverrides(cooldown: cooldown), ownerUIDs: owners)
    }

    @Test func configured_profiles_are_added_saved_and_route_their_clients() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        let report = try await engine.applyConfiguredProfiles(
            default: Self.settings("default"), profiles: [Self.settings("kids", clients: ["10.0.0.0/24"], owners: [1000])])
        #expect(report.changed == ["kids"])
        #expect(report.heldBack.isEmpty)
        #expect(await engine.profileList().map(\.name) == ["default", "kids"])
        #expect(await engine.profileOwners()["kids"] == [1000])
        _ = try await engine.block(["instagram"], profile: "kids")
        #expect(await engine.decision("www.instagram.com", client: "10.0.0.9").blocked, "a client of the network is the kids profile")
        #expect(await !engine.decision("www.instagram.com", client: "10.0.1.9").blocked, "others keep the default profile")

        // Committed like any change: a restart of the engine finds the profile and its networks.
        let again = try await Fixture.start(dir, time)
        #expect(await again.profileList().first { $0.name == "kids" }?.clients == ["10.0.0.0/24"])
        // Applying the same configuration again changes nothing and commits nothing.
        #expect(try await again.applyConfiguredProfiles(default: Self.settings("default"), profiles: [Self.settings("kids", clients: ["10.0.0.0/24"], owners: [1000])]) == ProfileConfigurationReport())
    }

    @Test func a_shorter_cooldown_waits_while_a_cooldown_runs_and_never_shortens_the_running_one() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.applyConfiguredProfiles(default: Self.settings("default"), profiles: [])
        let blocked = try await engine.block(["instagram"])
        let lockedUntil = try #require(blocked.entries.first?.lockedUntil)
        #expect(lockedUntil == Fixture.noon + .hours(2), "strict preset: 2 h")

        let looser = Self.settings("default", cooldown: .minutes(30))
        let held = try await engine.applyConfiguredProfiles(default: looser, profiles: [])
        #expect(held.changed.isEmpty)
        #expect(held.heldBack.count == 1)
        #expect(held.heldBack.first?.contains("cooldown") == true)
        #expect(held.heldBack.first?.contains("2026-11-18T14:00:00Z") == true, "says when it can apply: \(held.heldBack)")
        #expect(await refusal { () async throws(EngineError) in try await engine.unblock(["instagram"]) }?.rule == .cooldown, "the running cooldown holds")

        // After the lock ends the same file applies, and new blocks get the shorter cooldown.
        time.pass(.hours(2) + .minutes(1))
        let applied = try await engine.applyConfiguredProfiles(default: looser, profiles: [])
        #expect(applied.changed == ["default"])
        #expect(applied.heldBack.isEmpty)
        let next = try await engine.block(["tiktok"])
        #expect(next.entries.first?.lockedUntil == time.read().wall + .minutes(30))
    }

    @Test func a_held_back_loosening_applies_by_itself_when_the_lock_ends() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.applyConfiguredProfiles(default: Self.settings("default"), profiles: [])
        _ = try await engine.block(["instagram"])
        let looser = Self.settings("default", cooldown: .minutes(30))
        #expect(try await engine.applyConfiguredProfiles(default: looser, profiles: []).heldBack.count == 1)
        #expect(await engine.nextDueInstant().map { $0 <= Fixture.noon + .hours(2) } == true, "the timer wakes at the lock's end")

        // Still locked: a tick changes nothing.
        time.pass(.hours(1))
        try await engine.tick()
        #expect(try await engine.block(["tiktok"]).entries.first { $0.id == "tiktok" }?.lockedUntil == time.read().wall + .hours(2))

        // Both locks over (tiktok's ends at 15:00): the timer's tick applies the file, no reload needed.
        time.pass(.hours(2) + .minutes(1))
        try await engine.tick()
        #expect(await engine.heldBackProfiles == nil)
        let next = try await engine.block(["youtube"])
        #expect(next.entries.first { $0.id == "youtube" }?.lockedUntil == time.read().wall + .minutes(30))
    }

    @Test func tightening_applies_at_once_even_while_locked() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.applyConfiguredProfiles(
            default: Self.settings("default"), profiles: [Self.settings("kids", clients: ["10.0.0.0/24"])])
        _ = try await engine.block(["instagram"], profile: "kids")
        // More clients and a longer cooldown: nothing gets looser.
        let tighter = Self.settings("kids", clients: ["10.0.0.0/24", "10.0.1.0/24"], cooldown: .hours(4))
        let report = try await engine.applyConfiguredProfiles(default: Self.settings("default"), profiles: [tighter])
        #expect(report.changed == ["kids"])
        #expect(report.heldBack.isEmpty)
        #expect(await engine.decision("www.instagram.com", client: "10.0.1.5").blocked)
    }

    @Test(arguments: [
        ("time zone", Self.settings("kids", clients: ["10.0.0.0/24"], zone: "Asia/Tokyo")),
        ("clients", Self.settings("kids", clients: [])),
        ("tokens_per_month", Self.settings("kids", clients: ["10.0.0.0/24"], preset: .flexible)),
    ])
    func a_loosening_change_is_held_back_whole_while_a_lock_is_in_force(what: String, change: ProfileSettings) async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(dir, time)
        let before = Self.settings("kids", clients: ["10.0.0.0/24"])
        _ = try await engine.applyConfiguredProfiles(default: Self.settings("default"), profiles: [before])
        _ = try await engine.block(["instagram"], profile: "kids")
        let report = try await engine.applyConfiguredProfiles(default: Self.settings("default"), profiles: [change])
        #expect(report.heldBack.first?.contains(what) == true, "\(report.heldBack)")
        #expect(await engine.decision("www.instagram.com", client: "10.0.0.9").blocked, "the device stays in its profile")
        #expect(await engine.profileList().first { $0.name == "kids" }?.clients == ["10.0.0.0/24"])
    }

    @Test(arguments: [
        (Self.settings("default", zone: "Mars/Olympus"), "Mars/Olympus"),
        (Self.settings("default", cooldown: .minutes(1)), "cooldown"),
        (Self.settings("house"), "default profile"),
    ])
    func invalid_profiles_are_rejected_before_anything_changes(first: ProfileSettings, mentions: String) async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        do {
            _ = try await engine.applyConfiguredProfiles(default: first, profiles: [Self.settings("kids", clients: ["10.0.0.0/24"])])
            Issue.record("expected a rejection")
        } catch {
            #expect("\(error)".contains(mentions), "\(error)")
        }
        #expect(await engine.profileList().map(\.name) == ["default"], "nothing was applied")
    }
}
