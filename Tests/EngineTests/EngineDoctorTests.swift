import ControlAPI
@testable import ControlServer
import DoctorChecks
@testable import Enforcement
@testable import Engine
@testable import Firewall
@testable import Helper
@testable import HostsMode
@testable import HouseholdPage
@testable import LowPriority
import ScrollOffCore
@testable import ServiceKit
import Testing

/// The engine's facts for `scrolloff doctor` (SPEC §11): the name it probes, the clock, the database.
@Suite("Engine: doctor facts")
struct EngineDoctorTests {
    static let loopback = ClientIP("127.0.0.1") ?? .unknown

    @Test func with_nothing_blocked_there_is_no_probe_name() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        #expect(await engine.blockedProbeName(profile: "default", client: Self.loopback) == nil)
    }

    @Test(arguments: ["instagram", "news.example.net"])
    func the_probe_name_is_one_the_dns_path_blocks_for_the_client(entry: String) async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block([entry])
        let probe = try #require(await engine.blockedProbeName(profile: "default", client: Self.loopback))
        #expect(probe.entry.rawValue == entry)
        #expect(await engine.decision(probe.name).blocked, "\(probe.name)")
    }

    @Test func the_doctor_probe_of_a_blocked_name_is_no_urge_but_other_clients_and_later_queries_are() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["instagram"])
        let probe = try #require(await engine.blockedProbeName(profile: "default", client: Self.loopback))
        let now = engine.box.enforcement.now()
        let d = await engine.decision(probe.name)
        engine.recordUrge(d, enforcement: engine.box.enforcement, client: Self.loopback, now: now + .seconds(1))
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }.isEmpty, "doctor's probe counted as an urge")
        // Another device in the same seconds is a person: counted.
        engine.recordUrge(d, enforcement: engine.box.enforcement, client: ClientIP("127.0.0.2") ?? .unknown, now: now + .seconds(2))
        // The probe's address once the grace and the episode are over: counted again.
        engine.recordUrge(d, enforcement: engine.box.enforcement, client: Self.loopback,
                          now: now + UrgeRecorder.probeGrace + UrgeRecorder.episode + .seconds(1))
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.count == 2, "\(urges)")
    }

    @Test func a_probe_from_a_client_of_another_profile_gets_no_name_of_this_one() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.addProfile("kids", clients: ["10.0.0.0/8"])
        _ = try await engine.block(["tiktok"], profile: "kids")
        // Doctor's probes come from 127.0.0.1, which the default profile covers: tiktok is open there.
        #expect(await engine.blockedProbeName(profile: "kids", client: Self.loopback) == nil)
        let fromKids = try #require(await engine.blockedProbeName(profile: "kids", client: ClientIP("10.1.2.3") ?? .unknown))
        #expect(fromKids.entry.rawValue == "tiktok")
        #expect(await engine.decision(fromKids.name, client: "10.1.2.3").blocked)
    }

    @Test func a_moved_system_clock_shows_as_an_offset_and_then_as_a_tamper_event() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        let calm = await engine.doctorFacts(profile: "default", probeClient: nil)
        #expect(calm.clock.offsetSeconds == 0)
        #expect(calm.clock.recentTamper.isEmpty)
        #expect(calm.clock.thresholdSeconds == 600)
        #expect(calm.database.problems.isEmpty)
        #expect(calm.database.path.hasSuffix("/scrolloff.sqlite"))

        time.setWall(by: .hours(2))
        let moved = await engine.doctorFacts(profile: "default", probeClient: nil)
        #expect(moved.clock.offsetSeconds == 7200)
        #expect(DoctorVerdicts.clock(moved.clock).status == .fail)
        // The next commit writes the tamper event; doctor then lists it.
        _ = try await engine.block(["instagram"])
        let recorded = await engine.doctorFacts(profile: "default", probeClient: nil)
        #expect(recorded.clock.recentTamper.count == 1)
        #expect(recorded.clock.recentTamper.first?.message.contains("forward by 120 min") == true)
    }
}
