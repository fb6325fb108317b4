import ControlAPI
import ControlServer
import DomainLists
import Engine
import Foundation
import Helper
import ScrollOffCore
import Testing

@Suite("Engine: strict curfews and fetched lists")
struct EngineListTests {
    @Test func strict_curfew_blocks_every_name_but_the_allow_list() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.addSchedule(ScheduleRequest(name: "lights-out", from: "13:00", to: "15:00", curfew: true, strict: true,
                                                         entries: []))
        #expect(await engine.decision("www.example.com").blocked == false)
        time.pass(.minutes(60))
        try await engine.tick() // the window edge is the snapshot's validUntil
        let d = await engine.decision("www.example.com")
        #expect(d.blocked)
        #expect(d.ttlCap <= 10)
        #expect(engine.box.enforcement.isStrictCurfew(profile: 0, now: Fixture.noon + .minutes(60)))
        #expect(await engine.decision("pool.ntp.org").blocked == false)
        #expect(await engine.decision("lists.example.org").blocked == false)
        #expect(try await StatusReport(engine.status()).strictCurfewUntil == Fixture.noon + .hours(3))
    }

    @Test func a_list_url_host_is_allowed_as_that_name_only_not_the_names_below_it() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["news.example.net"])
        await engine.setLists([:], names: ["feed"], hosts: ["example.net"])
        #expect(await engine.decision("example.net").blocked == false)
        #expect(await engine.decision("news.example.net").blocked, "a blocked name below the list host stays blocked")
        #expect(await engine.decision("www.news.example.net").blocked)
    }

    @Test func a_fetched_list_is_an_entry_and_its_url_host_is_always_allowed() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let parsed = try ListParser.parse("||doomscroll.example^\n0.0.0.0 feeds.example.net\n")
        // "doom" is fetched; "other-example-net" is configured but has no copy yet.
        await engine.setLists(["doom": parsed.rules], names: ["doom", "other-example-net"], hosts: ["feeds.example.net"])
        #expect(await engine.decision("m.doomscroll.example").blocked == false) // listed, not blocked yet

        _ = try await engine.block(["doom"])
        #expect(await engine.decision("m.doomscroll.example").blocked)
        // The list names its own host, but a source's host is never blocked (SPEC §1).
        #expect(await engine.decision("feeds.example.net").blocked == false)
        // A source not fetched yet can be blocked by name; it blocks nothing until its list arrives.
        _ = try await engine.block(["other-example-net"])
        #expect(await engine.decision("other-example-net").blocked == false)
        #expect(try await StatusReport(engine.status()).entries.map(\.id).sorted() == ["doom", "other-example-net"])
    }

    @Test func a_list_whose_new_copy_failed_keeps_its_previous_copy() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        await engine.setLists(["doom": try ListParser.parse("doomscroll.example\n").rules])
        _ = try await engine.block(["doom"])
        await engine.setLists([:], names: ["doom"], keeping: ["doom"])
        #expect(await engine.decision("doomscroll.example").blocked)
        await engine.setLists([:], names: ["doom"])
        #expect(await engine.decision("doomscroll.example").blocked == false)
    }

    @Test func unblocking_a_custom_domain_drops_it_from_status_and_the_matcher() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["news.example.com"])
        time.pass(.hours(2))
        _ = try await engine.unblock(["news.example.com"])
        #expect(try await StatusReport(engine.status()).entries.isEmpty)
        #expect(await engine.decision("news.example.com").managed == false)
        #expect(engine.box.enforcement.tables.entries.contains("news.example.com") == false)
    }

    @Test func a_custom_domain_a_finished_focus_session_named_leaves_once_unblocked() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["news.example.com"])
        _ = try await engine.focus(length: .minutes(30), entries: ["news.example.com"])
        time.pass(.hours(2) + .minutes(1)) // the focus session and the cooldown are both over
        _ = try await engine.unblock(["news.example.com"])
        #expect(try await StatusReport(engine.status()).entries.isEmpty)
        #expect(await engine.decision("news.example.com").managed == false)
        #expect(engine.box.enforcement.tables.entries.contains("news.example.com") == false)
        // A new focus session without entries names nothing: the finished one's entries are gone.
        let refused = await #expect(throws: EngineError.self) { try await engine.focus(length: .minutes(10)) }
        #expect(refused?.description.contains("needs entries") == true, "\(String(describing: refused))")
    }

    @Test func list_files_parse_off_the_engine_and_a_broken_one_is_reported() throws {
        let dir = Fixture.temporaryDirectory()
        let good = dir + "/good.txt", bad = dir + "/bad.txt"
        try "||doomscroll.example^\nfeeds.example.net\n".write(toFile: good, atomically: true, encoding: .utf8)
        try "<html><body>Not found</body></html>\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let parsed = HelperEngine.parseLists(files: ["good": good, "bad": bad], budget: .default)
        #expect(parsed.lists["good"]?.count == 2)
        #expect(parsed.lists["bad"] == nil)
        #expect(parsed.failures["bad"] != nil)
    }
}
