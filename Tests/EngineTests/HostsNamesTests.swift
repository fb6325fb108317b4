import ControlAPI
import Helper
import ScrollOffCore
import Testing

/// The names hosts mode writes come from the same published enforcement as the DNS answers (SPEC §10).
@Suite("Hosts mode: the names of the blocking entries")
struct HostsNamesTests {
    @Test func blocked_service_writes_its_listed_subdomains_and_a_custom_domain_its_name() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        #expect(engine.box.enforcement.hostsNames(profile: 0, at: Fixture.noon).isEmpty, "nothing blocked, nothing written")
        _ = try await engine.block(["instagram", "News.Example.com."])
        let names = Set(engine.box.enforcement.hostsNames(profile: 0, at: Fixture.noon))
        for name in ["instagram.com", "www.instagram.com", "i.instagram.com", "cdninstagram.com", "news.example.com"] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(!names.contains("tiktok.com"))
    }

    @Test func always_allowed_names_are_never_written() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        // lists.example.org is one of the fixture's always-allowed hosts; it wins over a block.
        _ = try await engine.block(["lists.example.org", "example.org"])
        let names = Set(engine.box.enforcement.hostsNames(profile: 0, at: Fixture.noon))
        #expect(names.contains("example.org"))
        #expect(!names.contains("lists.example.org"))
    }

    @Test func a_grant_takes_the_names_out_until_its_end_from_the_same_snapshot() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        _ = try await engine.use("instagram", for: .seconds(30))
        let enforcement = engine.box.enforcement
        #expect(!enforcement.hostsNames(profile: 0, at: Fixture.noon + .seconds(29)).contains("instagram.com"))
        // The snapshot already holds the grant's end: no republish is needed to know it.
        #expect(enforcement.hostsNames(profile: 0, at: Fixture.noon + .seconds(31)).contains("instagram.com"))
        #expect(enforcement.snapshot.validUntil.map { $0 <= Fixture.noon + .seconds(30) } == true)
    }

    /// SPEC §2: a strict curfew blocks every name but the always-allowed ones. A hosts file cannot
    /// say "everything", so during one it lists every name of every entry, named by a rule or not;
    /// after it, nothing (no other rule blocks).
    @Test func strict_curfew_writes_every_entrys_names_while_it_runs_and_none_after() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.addSchedule(ScheduleRequest(name: "lights-out", from: "11:00", to: "15:00", curfew: true, strict: true, entries: []))
        let enforcement = engine.box.enforcement
        let during = Set(enforcement.hostsNames(profile: 0, at: Fixture.noon))
        for name in ["instagram.com", "tiktok.com", "youtube.com", "www.reddit.com"] { #expect(during.contains(name), "\(name)") }
        #expect(!during.contains("lists.example.org"), "allow beats block, even in a strict curfew")
        #expect(enforcement.hostsNames(profile: 0, at: Fixture.noon + .hours(4)).isEmpty)
    }
}
