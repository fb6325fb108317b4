@testable import Enforcement
@testable import Engine
import Foundation
@testable import Helper
import ScrollOffCore
import Store
import Testing

/// Profiles from the configuration file, applied at every start and reload through the engine
/// (SPEC §13), and what a reload may not loosen while a lock is in force (SPEC §3, §11).
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
        #expect(await engine.configuredProfiles.heldBack == nil)
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

/// Devices moved between profiles by another profile's networks (longest prefix, ties by name;
/// SPEC §9): a lock of the profile that has them now must hold them (SPEC §3, §11).
extension EngineConfigurationTests {
    static let kids = settings("kids", clients: ["10.0.0.0/24"])
    static let tv = settings("tv", clients: ["10.0.5.0/24"])

    /// Default, kids (10.0.0.0/24) and tv (10.0.5.0/24), with instagram blocked in `locked`, so
    /// that profile's cooldown runs until 14:00.
    static func lockedEngine(_ dir: String, _ time: TestTimeSource, locked: String) async throws -> HelperEngine {
        let engine = try await Fixture.start(dir, time)
        _ = try await engine.applyConfiguredProfiles(default: settings("default"), profiles: [kids, tv])
        _ = try await engine.block(["instagram"], profile: locked)
        return engine
    }

    @Test(arguments: [
        ("default", [kids, tv, settings("free", clients: ["0.0.0.0/0", "::/0"])], "192.168.1.4", "free is not created yet"),
        ("default", [kids, tv, settings("free", clients: ["0.0.0.0/0", "::/0"])], "fd00::1", "free is not created yet"),
        // Renamed: kids stays (the file no longer names it) and children sorts first, so wins the tie.
        ("kids", [settings("children", clients: ["10.0.0.0/24"]), tv], "10.0.0.9", "children is not created yet"),
        ("kids", [kids, settings("tv", clients: ["10.0.5.0/24", "10.0.0.7/32"])], "10.0.0.7", "profile tv: clients 10.0.0.7/32 wait"),
        // Widened: its first address was kids' already; the devices after 10.0.0.255 were the default profile's.
        ("default", [settings("kids", clients: ["10.0.0.0/16"]), tv], "10.0.1.9", "profile kids: clients 10.0.0.0/16 wait"),
    ])
    func networks_that_would_take_devices_from_a_locked_profile_wait_for_its_lock(
        locked: String, change: [ProfileSettings], device: String, heldBack: String
    ) async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Self.lockedEngine(dir, time, locked: locked)
        let before = await engine.profileList().map { "\($0.name)=\($0.clients)" }
        #expect(await engine.decision("www.instagram.com", client: device).blocked, "the device starts in \(locked)")

        let report = try await engine.applyConfiguredProfiles(default: Self.settings("default"), profiles: change)
        #expect(report.heldBack.count == 1, "\(report.heldBack)")
        let line = try #require(report.heldBack.first)
        #expect(line.contains(heldBack), "\(line)")
        #expect(line.contains("profile \(locked) (such as"), "names the profile that keeps the devices: \(line)")
        #expect(line.contains("2026-11-18T14:00:00Z"), "says until when: \(line)")
        #expect(await engine.profileList().map { "\($0.name)=\($0.clients)" } == before, "nothing moved")
        #expect(await engine.decision("www.instagram.com", client: device).blocked, "the device stays in \(locked)")

        // The lock over, the timer applies the file by itself and the device leaves for the new profile.
        time.pass(.hours(2) + .minutes(1))
        try await engine.tick()
        #expect(await engine.configuredProfiles.heldBack == nil)
        #expect(await !engine.decision("www.instagram.com", client: device).blocked, "now routed by the new networks")
    }

    @Test(arguments: [
        // The default profile is not locked: /0 only takes its devices; kids' /24 is longer and keeps its own.
        ([kids, tv, settings("free", clients: ["0.0.0.0/0", "::/0"])], ["free"]),
        // tv is not locked: a /32 carved out of it, and a new network nobody claimed, apply at once.
        ([kids, tv, settings("phone", clients: ["10.0.5.7/32"]), settings("guests", clients: ["192.168.0.0/16"])], ["phone", "guests"]),
        ([kids, settings("tv", clients: ["10.0.5.0/24", "10.0.6.0/24"])], ["tv"]),
    ])
    func networks_that_take_devices_only_from_unlocked_profiles_apply_at_once(change: [ProfileSettings], changed: [String]) async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Self.lockedEngine(dir, time, locked: "kids")
        let report = try await engine.applyConfiguredProfiles(default: Self.settings("default"), profiles: change)
        #expect(report.heldBack.isEmpty, "\(report.heldBack)")
        #expect(Set(report.changed) == Set(changed))
        #expect(await engine.configuredProfiles.heldBack == nil)
        #expect(await engine.decision("www.instagram.com", client: "10.0.0.9").blocked, "kids keeps its devices")
        let names = await engine.profileList().map(\.name)
        #expect(Set(changed).isSubset(of: Set(names)), "\(names)")
    }

    @Test func a_held_back_configuration_that_became_invalid_is_dropped_once_not_retried() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Self.lockedEngine(dir, time, locked: "kids")
        // As if the zone had been valid when held back and a tzdata update removed it since.
        await engine.holdBack(HeldBackProfiles(first: Self.settings("default", zone: "Mars/Olympus"), profiles: [Self.kids, Self.tv],
                                               due: Fixture.noon + .minutes(1)))
        time.pass(.minutes(2))
        try await engine.tick()
        #expect(await engine.configuredProfiles.heldBack == nil, "not retried every minute")
        #expect(await engine.profileList().map(\.name) == ["default", "kids", "tv"], "the profiles in force stay")
    }

    @Test func a_profile_defined_twice_names_the_profiles_table() async throws {
        do {
            try HelperEngine.validateConfiguredProfiles(default: Self.settings("default"), profiles: [Self.kids, Self.kids])
            Issue.record("expected a rejection")
        } catch {
            #expect(error.description.contains("[[profiles]]"), "\(error)")
        }
    }
}

extension HelperEngine {
    /// Sets what waits for a lock, as `applyConfiguredProfiles` would.
    func holdBack(_ held: HeldBackProfiles) { configuredProfiles.heldBack = held }
}

/// The range arithmetic the takeover check probes with (first address, the one past the end).
extension EngineConfigurationTests {
    @Test(arguments: [
        ("10.0.0.5/24", "10.0.0.0", "10.0.1.0"),
        ("10.0.0.7", "10.0.0.7", "10.0.0.8"),
        ("0.0.0.0/0", "0.0.0.0", nil),
        ("255.255.255.0/24", "255.255.255.0", nil),
        ("fd00::1/64", "fd00:0:0:0:0:0:0:0", "fd00:0:0:1:0:0:0:0"),
        ("fd00::ffff:ffff:ffff:ffff/128", "fd00:0:0:0:ffff:ffff:ffff:ffff", "fd00:0:0:1:0:0:0:0"),
        ("::/0", "0:0:0:0:0:0:0:0", nil),
    ] as [(String, String, String?)])
    func a_network_knows_its_first_address_and_the_one_after_its_last(text: String, first: String, after: String?) throws {
        let network = try ClientNetwork(parsing: text)
        #expect(network.first.description == first)
        #expect(network.afterLast?.description == after)
        #expect(network.contains(network.first))
        if let next = network.afterLast { #expect(!network.contains(next)) }
    }
}
